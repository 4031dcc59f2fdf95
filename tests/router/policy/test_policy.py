"""Policy decides on effects, not action names; its settings fail closed; no secret is published.

Every command is planned, decided by `Policy.decide` and, when allowed, run through the router's
one pipeline against a real redis-server (the checks the worker and the one-shot tool share),
with every skill the router ships and dry run on, so nothing leaves for a platform even when
policy lets it through. The queue around it is tested in test_worker and test_control_plane.
"""

import pytest

from protocol.commands import CommandEnvelope
from router.errors import ConfigError
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.queue.redis_io import connect
from router.redaction import Redactor
from router.registry import SkillContext, discover_skills
from tests.router.router_helpers import OWNER_TURN, settings_for

SKILLS = discover_skills()
CREDS = {"MOLTBOOK_API_KEY": "moltbook_sk_" + "policyTestKey12345", "BSKY_HANDLE": "me.example",
         "BSKY_PASSWORD": "bsky-" + "app-pass-9876"}
COMMENT_AS_POST = ("CREATE_POST", {"platform": "moltbook", "text": "same comment", "reply_to": "p1"})
COMMENT = ("MOLTBOOK_COMMENT", {"post_id": "p1", "text": "same comment"})
# One command per effect that writes, across every skill that writes.
WRITES = [
    ("CREATE_POST", {"platform": "x", "text": "hello"}),
    ("CREATE_POST", {"platform": "bsky", "text": "hello", "reply_to": "at://did:plc:a/app.bsky.feed.post/b"}),
    ("CREATE_POST", {"platform": "mastodon", "text": "hello", "quote": "1"}),
    ("LIKE_POST", {"platform": "reddit", "post_id": "t3_a"}),
    ("DELETE_POST", {"platform": "mastodon", "post_id": "1"}),
    COMMENT,
    ("NOTE", {"text": "a note"}),
]


def run(redis_urls, admin, tmp_path, commands, **settings):
    """Each command's reply, as the router would send it."""
    config = settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="1", **settings)
    redactor = Redactor(list(CREDS.values()))
    policy = Policy(config, SKILLS, redactor)
    pipeline = Pipeline(SKILLS, policy, redactor)
    conn = connect(config)
    replies = []
    try:
        for action, params in commands:
            planned = pipeline.plan(CommandEnvelope.new(action, params, "t", ttl_seconds=60, origin=OWNER_TURN))
            assert isinstance(planned, Planned), planned
            reply = pipeline.check(planned, conn)
            if reply is None:
                context = SkillContext(planned.envelope.id, "t", CREDS, {}, config.data_dir, dry_run=True)
                reply = pipeline.run(planned, context).reply
            policy.record(planned.effect, planned.envelope, reply, conn)
            replies.append(pipeline.redact(reply))
    finally:
        conn.close()
    return replies


@pytest.mark.parametrize("setting", ["MOLTBOOK_COMMENT", "moltbook:reply", "reply", "*:reply", "moltbook:*"])
def test_approval_follows_the_effect_whatever_the_action(redis_urls, admin, tmp_path, setting):
    replies = run(redis_urls, admin, tmp_path, [COMMENT_AS_POST, COMMENT], ROUTER_REQUIRE_APPROVAL=setting)
    assert [r["status"] for r in replies] == ["pending_approval", "pending_approval"]
    assert all(r["error"] == "approval_required" for r in replies)
    assert not (tmp_path / "outbox.jsonl").exists()


def test_approval_of_a_reply_leaves_a_post_and_a_read_alone(redis_urls, admin, tmp_path):
    commands = [("CREATE_POST", {"platform": "moltbook", "text": "a post of its own"}), ("PING", {})]
    replies = run(redis_urls, admin, tmp_path, commands, ROUTER_REQUIRE_APPROVAL="MOLTBOOK_COMMENT")
    assert [r["status"] for r in replies] == ["ok", "ok"]


def test_the_kill_switch_stops_every_effect_that_writes_and_no_read(redis_urls, admin, tmp_path):
    replies = run(redis_urls, admin, tmp_path, [*WRITES, ("PING", {})], ROUTER_KILL_SWITCH="1")
    assert [r["error"] for r in replies[:-1]] == ["kill_switch"] * len(WRITES)
    assert replies[-1]["status"] == "ok"
    assert not (tmp_path / "outbox.jsonl").exists() and not (tmp_path / "notes.jsonl").exists()


def test_a_rate_limit_named_by_action_counts_the_same_effect_under_another_name(redis_urls, admin, tmp_path):
    replies = run(redis_urls, admin, tmp_path, [COMMENT, COMMENT_AS_POST, COMMENT_AS_POST],
                  ROUTER_RATE_LIMITS="MOLTBOOK_COMMENT=1/3600")
    assert [r["status"] for r in replies] == ["ok", "denied", "denied"]
    assert replies[1]["error"] == "rate_limited" and replies[1]["retry_after"] > 0


@pytest.mark.parametrize(
    ("name", "value", "named"),
    [
        ("ROUTER_REQUIRE_APPROVAL", "note", "note"),
        ("ROUTER_REQUIRE_APPROVAL", "NOTES", "NOTES"),
        ("ROUTER_REQUIRE_APPROVAL", " Note ", "Note"),
        ("ROUTER_REQUIRE_APPROVAL", "CREATE_POST, create_post", "create_post"),
        ("ROUTER_REQUIRE_APPROVAL", "moltbook:comment", "moltbook:comment"),
        ("ROUTER_REQUIRE_APPROVAL", "myspace:post", "myspace:post"),
        ("ROUTER_REQUIRE_APPROVAL", "Post", "Post"),
        ("ROUTER_RATE_LIMITS", "note=1/60", "note"),
        ("ROUTER_RATE_LIMITS", "x:posts=1/60", "x:posts"),
    ],
)
def test_an_unknown_policy_setting_stops_the_router_naming_it(redis_urls, tmp_path, name, value, named):
    settings = settings_for(redis_urls.router_url, tmp_path, **{name: value})
    with pytest.raises(ConfigError) as raised:
        Policy(settings, SKILLS, Redactor([]))
    message = str(raised.value)
    assert name in message and repr(named) in message and "\n" not in message


@pytest.mark.parametrize(
    "text",
    [
        "my key is moltbook_sk_policyTestKey12345, enjoy",
        "login with bsky-app-pass-9876",
        "password: hunter2hunter2",
        "the API_KEY=abcd1234efgh to use",
        "token sk-" + "abcdefghijklmnopqrstuvwxyz123456",  # split: not a real key to scanners
        "ghp_" + "a" * 36,
    ],
)
def test_no_post_publishes_a_secret(redis_urls, admin, tmp_path, text):
    commands = [("CREATE_POST", {"platform": "bsky", "text": text}),
                ("MOLTBOOK_COMMENT", {"post_id": "p1", "text": text}), ("NOTE", {"text": text})]
    replies = run(redis_urls, admin, tmp_path, commands)
    assert [(r["status"], r["error"]) for r in replies] == [("denied", "secret_in_text")] * 3
    assert not (tmp_path / "outbox.jsonl").exists() and not (tmp_path / "notes.jsonl").exists()


def test_every_skill_states_an_effect_it_declares():
    for skill in SKILLS.values():
        assert skill.effects, skill.name
        assert all((scope.kind != "read") == skill.side_effect for scope in skill.effects), skill.name
