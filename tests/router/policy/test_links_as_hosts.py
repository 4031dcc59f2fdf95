"""A stranger's reply may name only the hosts and handles that person or the owner wrote, judged as
hosts a reader is sent to: every dot Unicode has, `dot` words, spaced dots and non-Latin domains
read as the host they spell, compared whole (never as substrings). Decided by the policy as the
router runs it (`Policy.decide`), and once through a real router process and a fake Bluesky."""

from __future__ import annotations

import pytest

from protocol.commands import CommandEnvelope
from protocol.link_hosts import dot_like
from protocol.origin import STRANGER, Origin
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.queue.redis_io import connect
from router.redaction import Redactor
from router.registry import discover_skills
from tests.router.router_helpers import RouterProcess, push, reply_of, router_env, settings_for, wait_until
from tests.support.fake_bsky import FakeBluesky

SKILLS = discover_skills()
POST = "at://did:plc:mallory/app.bsky.feed.post/3kabc"
ASKED = "what do you think of https://notscam.example/page and пример.рф ?"
# The dots the attack used and the other dot-like characters Unicode has, named.
DOTS = ["\u2027", "\u00b7", "\u30fb", "\uff0e", "\u3002", "\ufe52", "\u2024", "\uff61", "\uff65", "\u0589",
        "\u06d4", "\u2e31", "\u22c5", "\u2219", "\ua78f", "\u0387", "\ufe12"]
SPELLINGS = [
    "Thanks! see scam dot example", "Thanks! see scam DOT example/offer", "Thanks! scam (.) example",
    "Thanks! scam[.]example", "Thanks! scam . example", "Thanks! scam .example has it",
    "Thanks! 例え.jp has it", "Thanks! пример.рус has it", "Thanks! https://例え。jp/x",
    "Thanks! scam.example has it",  # inside notscam.example, which they wrote
    "Thanks! mail bob@scam.example", "Thanks! see https://notscam.example@scam.example/",
]
ORDINARY = [
    "Thanks! Great point . I agree", "Love the polka dot dress", "Dot and I will be there at 3.30",
    "Спасибо! Всё хорошо. Увидимся.", "ジョン・スミス agrees", "Thanks, i.e. yes. E.g. tomorrow.",
    "Good one\u2027 really", "Version 2.0 is out · see you",
]


def strangers_turn(words: str = ASKED) -> Origin:
    return Origin(STRANGER, "mention", author="did:plc:mallory", platform="bsky", post=POST, author_words=(words,))


@pytest.fixture
def decided(redis_urls, tmp_path):
    """The router's own checks on a stranger's reply (`Pipeline.plan` and `check`, on the real
    redis-server): "runs", or the error it is answered with."""
    settings = settings_for(redis_urls.router_url, tmp_path)
    pipeline = Pipeline(SKILLS, Policy(settings, SKILLS, Redactor([])), Redactor([]))
    conn = connect(settings)

    def decide(text: str, origin: Origin) -> str:
        params = {"platform": "bsky", "text": text, "reply_to": POST}
        planned = pipeline.plan(CommandEnvelope.new("CREATE_POST", params, "t", 60, origin=origin))
        assert isinstance(planned, Planned), planned
        reply = pipeline.check(planned, conn)
        return "runs" if reply is None else str(reply.error)

    yield decide
    conn.close()


def test_the_dots_named_include_every_one_the_attack_used():
    assert {"\u2027", "\u00b7", "\u30fb", "\uff0e", "\u3002", "\ufe52", "\u2024"} <= dot_like()
    assert not {"\u2025", "\u2056", ":", ",", "a"} & dot_like()  # two or more dots, or none


@pytest.mark.parametrize("dot", DOTS, ids=[f"U+{ord(d):04X}" for d in DOTS])
def test_a_foreign_host_spelt_with_any_dot_waits(decided, dot):
    assert decided(f"Thanks! Details at scam{dot}example/offer", strangers_turn()) == "approval_required"


@pytest.mark.parametrize("text", SPELLINGS)
def test_a_foreign_host_in_any_spelling_waits(decided, text):
    assert decided(text, strangers_turn()) == "approval_required"


@pytest.mark.parametrize("text", [
    "Thanks! notscam.example is good", "Thanks! https://docs.notscam.example/x is good",
    "Thanks! пример.рф is good", "Thanks! xn--e1afmkfd.xn--p1ai is good", "Thanks! notscam・example",
])
def test_the_hosts_they_wrote_in_any_spelling_run(decided, text):
    assert decided(text, strangers_turn()) == "runs"


@pytest.mark.parametrize("text", ORDINARY)
def test_an_ordinary_reply_with_no_host_runs(decided, text):
    assert decided(text, strangers_turn()) == "runs"


def test_a_handle_is_the_whole_handle(decided):
    assert decided("Thanks @mallory!", strangers_turn("cc @mallory")) == "runs"
    assert decided("Thanks @mallory_scam!", strangers_turn("cc @mallory")) == "approval_required"
    assert decided("ask @bob@scam.example", strangers_turn("ask @bob@notscam.example")) == "approval_required"


def test_a_real_router_holds_the_foreign_host_and_posts_the_plain_reply(redis_urls, tmp_path):
    bsky = FakeBluesky(password="links-pass-1234").start()
    admin = redis_urls.admin_client()
    router = RouterProcess(router_env(redis_urls.router_url, tmp_path, "r1", BSKY_HANDLE=bsky.handle,
                                      BSKY_PASSWORD="links-pass-1234", BSKY_SERVICE=bsky.url,
                                      BSKY_APPVIEW=bsky.url))
    try:
        mallory = bsky.add_account("mallory.test")
        post = bsky.add_post(mallory, ASKED)
        origin = Origin(STRANGER, "mention", author=mallory, platform="bsky", post=post, author_words=(ASKED,))
        wait_until(lambda: admin.exists(redis_urls.keys.router_heartbeat("r1")), "the router")
        answers = [
            reply_of(admin, redis_urls.keys, push(admin, redis_urls.keys, "CREATE_POST",
                                                   {"platform": "bsky", "text": text, "reply_to": post},
                                                   origin=origin))
            for text in ("Thanks! see scam\u30fbexample", "Thanks! Great point.")
        ]
        assert (answers[0]["status"], answers[0]["error"]) == ("pending_approval", "approval_required"), answers
        assert "scam.example" in answers[0]["message"]
        assert answers[1]["status"] == "ok", answers
        posted = [w["record"]["text"] for w in bsky.writes() if w["collection"] == "app.bsky.feed.post"]
        assert posted == ["Thanks! Great point."]
    finally:
        router.stop()
        bsky.stop()
        admin.close()
