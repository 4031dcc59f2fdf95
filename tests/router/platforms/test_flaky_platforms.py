"""Every write skill on every platform fake, as the router runs it (plan -> run -> outcome):

- effects, not names: the one write the platform sees is of the kind, and on the platform, the
  skill declared before it ran (a reply is not a post, a like is not a read);
- unknown when it may have happened: the platform acts and then its answer is lost (unreadable
  200, 502, connection reset, too late): the outcome is `unknown`, never `error` (which invites
  a repeat) and never `ok` unless the skill checked that it happened; no client repeats the write;
- a 429 is the platform's own "no": `error`, `rate_limited`, with the wait it asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from protocol.commands import CommandEnvelope
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.redaction import Redactor
from router.registry import SkillContext, discover_skills
from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_mastodon import FakeMastodon
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_reddit import FakeReddit
from tests.support.fake_x import ME_ID, FakeX
from tests.support.recording_server import Recorded, RecordingServer

SKILLS = discover_skills()


@dataclass
class Platform:
    name: str
    fake: RecordingServer
    credentials: dict[str, str]
    env: dict[str, str]
    own: str  # a post of the account's own (to delete)
    other: str  # someone else's post (to reply to, like, quote)
    kind_of: Callable[[Recorded], str | None]  # the kind of write a request is, None if not a write


def body_of(request: Recorded) -> dict[str, Any]:
    try:
        data = request.json()
    except ValueError:
        return request.form()
    return data if isinstance(data, dict) else {}


def bsky() -> Platform:
    fake = FakeBluesky(password="bsky-" + "flaky-pass-1").start()
    other = fake.add_post(fake.add_account("someone.test"), "their post")

    def kind_of(request: Recorded) -> str | None:
        body = body_of(request)
        if request.path.endswith("deleteRecord"):
            return "delete"
        if not request.path.endswith(("createRecord", "putRecord")):
            return None
        if body.get("collection") == "app.bsky.feed.like":
            return "like"
        return "reply" if body.get("record", {}).get("reply") else "post"

    creds = {"BSKY_HANDLE": fake.handle, "BSKY_PASSWORD": fake.password}
    env = {"BSKY_SERVICE": fake.url, "BSKY_APPVIEW": fake.url}
    return Platform("bsky", fake, creds, env, fake.add_post(fake.did, "my post"), other, kind_of)


def mastodon() -> Platform:
    fake = FakeMastodon(token="mastodon-" + "flaky-token-2").start()

    def kind_of(request: Recorded) -> str | None:
        if request.method == "DELETE" and request.path.startswith("/api/v1/statuses/"):
            return "delete"
        if request.method == "POST" and request.path.endswith("/favourite"):
            return "like"
        if request.method == "POST" and request.path == "/api/v1/statuses":
            return "reply" if body_of(request).get("in_reply_to_id") else "post"
        return None

    creds = {"MASTODON_TOKEN": fake.token, "MASTODON_INSTANCE": fake.url}
    own, other = fake.add_status("my post")["id"], fake.add_status("a post")["id"]
    return Platform("mastodon", fake, creds, {}, own, other, kind_of)


def x() -> Platform:
    creds = {
        "X_API_KEY": "ck-flaky-1",
        "X_API_SECRET": "cs-flaky-2",
        "X_ACCESS_TOKEN": f"{ME_ID}-at-flaky-3",
        "X_ACCESS_SECRET": "as-flaky-4",
    }
    fake = FakeX(**{k.lower().removeprefix("x_"): v for k, v in creds.items()}).start()
    own = fake.add_tweet("my post")["id"]

    def kind_of(request: Recorded) -> str | None:
        if request.method == "DELETE" and request.path.startswith("/2/tweets/"):
            return "delete"
        if request.method == "POST" and request.path.endswith("/likes"):
            return "like"
        if request.method == "POST" and request.path == "/2/tweets":
            return "reply" if body_of(request).get("reply") else "post"
        return None

    return Platform("x", fake, creds, {"X_API_BASE": fake.url}, own, own, kind_of)


def reddit() -> Platform:
    fake = FakeReddit(password="reddit-" + "flaky-pass-5").start()
    creds = {
        "REDDIT_CLIENT_ID": fake.client_id,
        "REDDIT_SECRET": fake.secret,
        "REDDIT_USERNAME": fake.username,
        "REDDIT_PASSWORD": fake.password,
    }
    env = {"REDDIT_URL": fake.url, "REDDIT_OAUTH_URL": fake.url}
    kinds = {"/api/submit/": "post", "/api/comment/": "reply", "/api/vote/": "like", "/api/del/": "delete"}
    own = fake.add_submission(author=fake.username).fullname
    other = fake.add_submission().fullname
    return Platform(
        "reddit", fake, creds, env, own, other, lambda r: kinds.get(r.path) if r.method == "POST" else None
    )


def moltbook() -> Platform:
    fake = FakeMoltbook(api_key="moltbook_sk_" + "flakyKey6789").start()
    other = fake.add_post("their title", "their post").id
    own = fake.add_post("my title", "my post", author=fake.agent).id

    def kind_of(request: Recorded) -> str | None:
        if request.method == "DELETE":
            return "delete"
        if request.method != "POST":
            return None
        if request.path.endswith("/comments"):
            return "reply"
        return "like" if request.path.endswith("/upvote") else "post"

    return Platform(
        "moltbook",
        fake,
        {"MOLTBOOK_API_KEY": fake.api_key},
        {"MOLTBOOK_API_BASE": fake.base},
        own,
        other,
        kind_of,
    )


PLATFORMS = {"bsky": bsky, "mastodon": mastodon, "x": x, "reddit": reddit, "moltbook": moltbook}


def commands(p: Platform) -> list[tuple[str, dict[str, Any]]]:
    """One command per write effect the platform has, in every spelling the skills accept."""
    extra = {"subreddit": "test"} if p.name == "reddit" else {}
    found = [
        ("CREATE_POST", {"platform": p.name, "text": "a new post", **extra}),
        ("CREATE_POST", {"platform": p.name, "text": "a reply", "reply_to": p.other}),
        (
            "CREATE_POST",
            {
                "platform": p.name,
                "text": "a reply that quotes",
                "reply_to": p.other,
                "quote": p.other,
                "url": "https://example.com/x",
                **extra,
            },
        ),
        ("LIKE_POST", {"platform": p.name, "post_id": p.other}),
        ("DELETE_POST", {"platform": p.name, "post_id": p.own}),
    ]
    if p.name == "moltbook":
        found.append(("MOLTBOOK_COMMENT", {"post_id": p.other, "text": "a comment"}))
    return found


CASES = [(name, i) for name, make in PLATFORMS.items() for i in range(6 if name == "moltbook" else 5)]


@pytest.fixture
def platform(request):
    made = PLATFORMS[request.param]()
    yield made
    made.fake.stop()


def run(p: Platform, index: int, tmp_path, timeout: float = 5.0):
    action, params = commands(p)[index]
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw@127.0.0.1:1/0"})
    redactor = Redactor([])
    pipeline = Pipeline(SKILLS, Policy(settings, SKILLS, redactor), redactor)
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=60)
    planned = pipeline.plan(envelope)
    assert isinstance(planned, Planned), planned
    ctx = SkillContext(
        command_id=envelope.id,
        conversation="t",
        credentials=p.credentials,
        env=p.env,
        data_dir=tmp_path,
        timeout=timeout,
    )
    before = len(p.fake.requests)
    outcome = pipeline.run(planned, ctx)
    writes = [kind for r in p.fake.requests[before:] if (kind := p.kind_of(r)) is not None]
    return planned.effect, outcome.reply, writes


@pytest.mark.parametrize(("platform", "index"), CASES, indirect=["platform"])
def test_the_write_the_platform_sees_is_the_effect_the_skill_declared(platform, index, tmp_path):
    effect, reply, writes = run(platform, index, tmp_path)
    assert reply.status == "ok", reply
    assert effect.platform == platform.name
    assert writes == [effect.kind], f"declared {effect.scope}, the platform saw {writes}"


@pytest.mark.parametrize("mode", ["garbled", "error", "reset", "timeout"])
@pytest.mark.parametrize(("platform", "index"), CASES, indirect=["platform"])
def test_a_write_whose_answer_is_lost_is_unknown_and_sent_once(platform, index, mode, tmp_path):
    # Only the timeout mode needs a short client timeout; elsewhere a loaded machine's slow login
    # must not fail the request before its write is sent.
    platform.fake.break_writes, platform.fake.delay = mode, 3.0
    effect, reply, writes = run(platform, index, tmp_path, timeout=1.0 if mode == "timeout" else 5.0)
    assert writes == [effect.kind], f"the write was sent {len(writes)} times: {writes}"
    if reply.status == "ok":  # only when the skill itself found that it happened
        assert (reply.result or {}).get("already_posted") is True, reply
    else:
        assert reply.status == "unknown", reply


@pytest.mark.parametrize(("platform", "index"), CASES, indirect=["platform"])
def test_a_429_is_the_platforms_no_an_error_with_its_wait(platform, index, tmp_path):
    platform.fake.fail_mode, platform.fake.retry_after = "rate", "30"
    _, reply, _ = run(platform, index, tmp_path)
    assert (reply.status, reply.error) == ("error", "rate_limited"), reply
    assert json.dumps(reply.to_dict())
