"""The hard bounds through the real router: commands on a real redis-server, real workers (router
processes, or in-process workers on an injected clock), the skills' own effects, platform fakes."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from router.registry import discover_skills
from tests.router.router_helpers import (
    RouterProcess,
    WorkerThread,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)
from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_moltbook import FakeMoltbook

BSKY_PASSWORD = "bounds-bsky-" + "pass-1234"
MOLTBOOK_KEY = "moltbook_sk_" + "boundsTestKey98765"
NOON = 1_795_867_200.0


class Clock:
    def __init__(self, now: float = NOON) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def bsky():
    server = FakeBluesky(password=BSKY_PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def moltbook():
    server = FakeMoltbook(api_key=MOLTBOOK_KEY).start()
    yield server
    server.stop()


def fresh_text() -> str:
    return f"a thought of its own: {uuid.uuid4().hex} {uuid.uuid4().hex}"


def bsky_env(bsky: FakeBluesky) -> dict[str, str]:
    return {
        "BSKY_HANDLE": bsky.handle,
        "BSKY_PASSWORD": BSKY_PASSWORD,
        "BSKY_SERVICE": bsky.url,
        "BSKY_APPVIEW": bsky.url,
    }


def in_process(redis_urls, tmp_path, clock: Clock, credentials: dict[str, str], **env: str) -> WorkerThread:
    settings = settings_for(redis_urls.router_url, tmp_path, **env)
    thread = WorkerThread(settings, discover_skills(), credentials)
    thread.worker.policy.clock = clock
    return thread


def call(admin, keys, action: str, params: dict, conversation: str = "t") -> dict:
    return reply_of(admin, keys, push(admin, keys, action, params, conversation=conversation))


@pytest.mark.slow
def test_three_routers_share_the_quota_under_concurrent_commands(redis_urls, tmp_path, bsky):
    """24 posts pushed at once to three router processes with a quota of 5: exactly 5 reach Bluesky."""
    admin = redis_urls.admin_client()
    routers = [
        RouterProcess(
            router_env(
                redis_urls.router_url, tmp_path, f"r{i}", ROUTER_QUOTAS="bsky:post=5", **bsky_env(bsky)
            )
        )
        for i in range(3)
    ]
    try:
        wait_until(
            lambda: all(admin.exists(redis_urls.keys.router_heartbeat(f"r{i}")) for i in range(3)),
            "three routers",
        )
        ids = [
            push(admin, redis_urls.keys, "CREATE_POST", {"platform": "bsky", "text": fresh_text()})
            for _ in range(24)
        ]
        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda cid: reply_of(admin, redis_urls.keys, cid), ids))
        statuses = [(r["status"], r.get("error")) for r in replies]
        assert statuses.count(("ok", None)) == 5, Counter(statuses)
        # The rest are refused by the quota; a command refused for another reason under load (its
        # message says nothing was sent) gives its share back to a later one, so still 5 go out.
        others = [
            r
            for r in replies
            if (r["status"], r.get("error")) not in {("ok", None), ("denied", "quota_exceeded")}
        ]
        assert all(r["status"] in ("denied", "error") for r in others), others
        assert len(others) <= 2, others
        assert all(r["retry_after"] >= 1 for r in replies if r.get("error") == "quota_exceeded")
        assert len([w for w in bsky.writes() if w["collection"] == "app.bsky.feed.post"]) == 5

        def quota_shown() -> bool:
            beat = json.loads(admin.get(redis_urls.keys.router_heartbeat("r0")) or "{}")
            return beat.get("quotas", {}).get("bsky", {}).get("post") == {"limit": 5, "used": 5}

        wait_until(quota_shown, "the heartbeat's quotas")
        beat = json.loads(admin.get(redis_urls.keys.router_heartbeat("r1")))
        assert beat["quotas"]["moltbook"]["reply"] == {"limit": 20, "used": 0}
    finally:
        for router in routers:
            router.stop()
        admin.close()


def test_no_alias_escapes_a_bound_on_effects(redis_urls, tmp_path, moltbook):
    """CREATE_POST replying on Moltbook and MOLTBOOK_COMMENT are one effect, moltbook:reply."""
    first, second = moltbook.add_post("one", "first post"), moltbook.add_post("two", "second post")
    clock = Clock()
    credentials = {"MOLTBOOK_API_KEY": MOLTBOOK_KEY}
    with in_process(
        redis_urls,
        tmp_path,
        clock,
        credentials,
        ROUTER_QUOTAS="moltbook:reply=2",
        MOLTBOOK_API_BASE=moltbook.base,
    ):
        admin, keys = redis_urls.admin_client(), redis_urls.keys
        said = "What a careful measurement; I would love to see the raw numbers behind it."
        assert (
            call(admin, keys, "CREATE_POST", {"platform": "moltbook", "text": said, "reply_to": first.id})[
                "status"
            ]
            == "ok"
        )
        clock.now += 5
        paced = call(admin, keys, "MOLTBOOK_COMMENT", {"post_id": second.id, "text": fresh_text()})
        assert (paced["status"], paced["error"], paced["retry_after"]) == ("denied", "paced", 15)
        clock.now += 25
        again = call(admin, keys, "MOLTBOOK_COMMENT", {"post_id": second.id, "text": said.upper() + "!!"})
        assert (again["status"], again["error"]) == ("denied", "duplicate_content"), again
        assert (
            call(admin, keys, "MOLTBOOK_COMMENT", {"post_id": second.id, "text": fresh_text()})["status"]
            == "ok"
        )
        clock.now += 60
        over = call(
            admin, keys, "CREATE_POST", {"platform": "moltbook", "text": fresh_text(), "reply_to": second.id}
        )
        assert (over["status"], over["error"]) == ("denied", "quota_exceeded"), over
        admin.close()
    assert [len(p.comments) for p in (first, second)] == [1, 1]


def test_the_circuit_opens_on_failures_tells_the_owner_and_closes(redis_urls, tmp_path, moltbook):
    post = moltbook.add_post("one", "a post to like")
    clock = Clock()
    with in_process(
        redis_urls, tmp_path, clock, {"MOLTBOOK_API_KEY": MOLTBOOK_KEY}, MOLTBOOK_API_BASE=moltbook.base
    ):
        admin, keys = redis_urls.admin_client(), redis_urls.keys
        like = {"platform": "moltbook", "post_id": post.id}
        moltbook.fail_mode = "error"
        outcomes = [call(admin, keys, "LIKE_POST", like, "autonomy")["status"] for _ in range(5)]
        assert outcomes == ["unknown"] * 5  # a 500 on a write: it may have happened
        sent = len(moltbook.requests)
        refused = call(admin, keys, "LIKE_POST", like, "autonomy")
        assert (refused["status"], refused["error"], refused["retry_after"]) == (
            "denied",
            "circuit_open",
            900,
        )
        assert len(moltbook.requests) == sent  # the platform was not asked again
        feed = call(admin, keys, "MOLTBOOK_FEED", {"submolt": "general"})
        assert feed.get("error") != "circuit_open"  # reads are not held
        [notice] = [json.loads(n) for n in admin.lrange(keys.owner_notices, 0, -1)]
        assert (notice["type"], notice["platform"], notice["conversation"]) == (
            "circuit_open",
            "moltbook",
            "autonomy",
        )

        def circuit_in_heartbeat() -> bool:
            beat = json.loads(admin.get(keys.router_heartbeat("r1")) or "{}")
            return "moltbook" in beat.get("circuits", {})

        wait_until(circuit_in_heartbeat, "the open circuit in the heartbeat")
        moltbook.fail_mode = None
        clock.now += 899
        assert call(admin, keys, "LIKE_POST", like)["error"] == "circuit_open"
        clock.now += 1
        assert call(admin, keys, "LIKE_POST", like)["status"] == "ok"
        kinds = [json.loads(n)["type"] for n in admin.lrange(keys.owner_notices, 0, -1)]
        assert kinds == ["circuit_closed", "circuit_open"]
        admin.close()


def test_an_unknown_bound_setting_stops_the_router_naming_it(redis_urls, tmp_path):
    for name, value, named in (
        ("ROUTER_QUOTAS", "mastadon:post=3", "'mastadon'"),
        ("ROUTER_PACING", "moltbook:comment=20", "'comment'"),
        ("ROUTER_QUOTAS", "post=lots", "'lots'"),
    ):
        router = RouterProcess(router_env(redis_urls.router_url, tmp_path, "bad", **{name: value}))
        assert router.wait(timeout=60) == 2
        lines = router.log_path.read_text().strip().splitlines()
        assert lines[-1].startswith(f"router: {name}: ") and named in lines[-1], lines
        router.log_path.unlink()
