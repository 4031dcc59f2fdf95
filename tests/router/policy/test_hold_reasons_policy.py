"""The policy itself gives every typed reason a command can wait for (`protocol.hold_reasons.Why`),
each with its sender, and says it with the one sentence the owner reads everywhere."""

from __future__ import annotations

import base64
from itertools import product

from protocol.commands import CommandEnvelope
from protocol.hold_reasons import HoldReason, Sender, Why, sentence
from protocol.origin import AUTONOMY, OWNER, STRANGER, Origin
from router.config.settings import RouterSettings
from router.mcp.origin import MCP_ORIGIN
from router.policy.checks import Policy
from router.redaction import Redactor
from router.registry import discover_skills

SKILLS = discover_skills()
POST = "at://did:plc:mallory/app.bsky.feed.post/3kabc"
HIDDEN = base64.b64encode(b"the owner's password is in this sentence somewhere").decode()
ORIGINS = [
    None,
    Origin(OWNER, "console"),
    Origin(OWNER, "console", taint=("_BROWSER_VISION https://news.example/a",), owner_words=("hi",)),
    Origin(OWNER, "console", taint=("a page",)).with_holds(["your memory 'bank_pin'"]),
    MCP_ORIGIN,
    Origin(AUTONOMY, "autonomy", platform="bsky"),
    Origin(AUTONOMY, "autonomy", platform="bsky", hold_writes=True),
    Origin(STRANGER, "mention", author="did:plc:mallory", platform="bsky", post=POST,
           author_words=("what do you think?",)),
]
COMMANDS = [
    ("CREATE_POST", {"platform": "bsky", "text": "hi"}),
    ("CREATE_POST", {"platform": "bsky", "text": f"look {HIDDEN}"}),
    ("CREATE_POST", {"platform": "bsky", "text": "see https://scam.example", "reply_to": POST}),
    ("LIKE_POST", {"platform": "bsky", "post_id": POST}),
    ("DELETE_POST", {"platform": "bsky", "post_id": POST}),
    ("NOTE", {"text": "a note"}),
]


def held(policy: Policy) -> list[tuple[HoldReason, str]]:
    found = []
    for origin, (action, params) in product(ORIGINS, COMMANDS):
        envelope = CommandEnvelope.new(action, params, "t", 60, origin=origin)
        effect = SKILLS[action].effect_of(params)
        if policy.origin_rules(effect, envelope, None, 0.0) is not None:
            continue
        reason = policy.hold_reason(effect, envelope)
        if reason is not None:
            decision = policy.approval(effect, envelope, None, 0.0)
            assert decision is not None
            found.append((reason, decision.message))
    return found


def test_the_policy_gives_every_reason_and_says_each_as_its_sentence():
    settings = RouterSettings.from_env(
        {"REDIS_URL": "redis://router:x@127.0.0.1:1/0", "ROUTER_REQUIRE_APPROVAL": "NOTE"}
    )
    found = held(Policy(settings, SKILLS, Redactor([])))
    assert {reason.why for reason, _ in found} == set(Why)
    assert {reason.sender for reason, _ in found} == set(Sender)
    for reason, message in found:
        assert sentence(reason) in message
        assert "(" not in message.split(": ", 1)[1], message  # no parentheses round the sentence


def test_an_mcp_write_waits_as_an_mcp_clients_words():
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:x@127.0.0.1:1/0"})
    policy = Policy(settings, SKILLS, Redactor([]))
    params = {"platform": "bsky", "post_id": POST}
    envelope = CommandEnvelope.new("LIKE_POST", params, "mcp", 60, origin=MCP_ORIGIN)
    reason = policy.hold_reason(SKILLS["LIKE_POST"].effect_of(params), envelope)
    assert reason == HoldReason(Why.NOT_OWNER_WORDS, Sender.MCP, fields=("post_id",))
    assert sentence(reason) == (
        "An MCP client asked for this, and SafeClaw cannot see what that client had read. "
        "You did not pick which post yourself."
    )


def test_a_tainted_turn_publishes_unasked_only_the_words_of_the_owners_message_of_this_turn():
    """The owner's earlier messages are theirs only: a post repeating one waits, even word for word."""
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:x@127.0.0.1:1/0"})
    policy = Policy(settings, SKILLS, Redactor([]))
    told = "I am seeing Dr Ann about my anxiety on Friday"
    origin = Origin(OWNER, "console", taint=("a mention",), owner_words=(told, "answer my mentions"))

    def reason(text: str, words: Origin = origin) -> HoldReason | None:
        params = {"platform": "mastodon", "text": text}
        envelope = CommandEnvelope.new("CREATE_POST", params, "t", 60, origin=words)
        return policy.hold_reason(SKILLS["CREATE_POST"].effect_of(params), envelope)

    held = reason(told)
    assert held is not None and held.why == Why.OWNER_ONLY_DATA
    assert "earlier message" in sentence(held)
    assert reason(told, Origin(OWNER, "console", taint=("a mention",), owner_words=(f'post "{told}"',))) is None
    assert reason(told, Origin(OWNER, "console", owner_words=(told, "post it"))) is None  # read nothing
