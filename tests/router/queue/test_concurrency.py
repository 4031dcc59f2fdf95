"""One slow platform stalls nothing else: each platform has its own bounded lane, and every
command is answered by its deadline (`unknown` for a side effect still in flight)."""

import pytest

from protocol.commands import CommandEnvelope
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, WorkerThread, reply_of, settings_for
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_x import ME_ID, FakeX

SKILLS = discover_skills()
X_CREDS = {"X_API_KEY": "ck-lanes-1", "X_API_SECRET": "cs-lanes-2",
           "X_ACCESS_TOKEN": f"{ME_ID}-at-lanes-3", "X_ACCESS_SECRET": "as-lanes-4"}


@pytest.fixture
def hanging_moltbook():
    fake = FakeMoltbook(api_key="moltbook_sk_" + "lanesKey123").start()
    fake.fail_mode, fake.delay = "slow", 60.0  # answers only when stopped
    yield fake
    fake.stop()


@pytest.fixture
def fast_x():
    fake = FakeX(**{k.lower().removeprefix("x_"): v for k, v in X_CREDS.items()}).start()
    yield fake
    fake.stop()


def push(admin, keys, action, params, ttl):
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=ttl, origin=OWNER_TURN)
    admin.lpush(keys.command_queue, envelope.to_json())
    return envelope.id


def worker(redis_urls, tmp_path, moltbook, x, **extra):
    settings = settings_for(redis_urls.router_url, tmp_path, MOLTBOOK_API_BASE=moltbook.base, X_API_BASE=x.url,
                            **extra)
    return WorkerThread(settings, dict(SKILLS), {"MOLTBOOK_API_KEY": moltbook.api_key, **X_CREDS})


def test_a_hanging_platform_delays_no_other_platform_and_no_ping(redis_urls, admin, tmp_path, hanging_moltbook,
                                                                 fast_x):
    keys = redis_urls.keys
    with worker(redis_urls, tmp_path, hanging_moltbook, fast_x):
        slow_post = push(admin, keys, "CREATE_POST", {"platform": "moltbook", "text": "hi", "title": "t"}, 4)
        slow_read = push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 4)
        ping = push(admin, keys, "PING", {}, 8)
        profile = push(admin, keys, "GET_PROFILE", {"platform": "x"}, 8)
        post = push(admin, keys, "CREATE_POST", {"platform": "x", "text": "not held up"}, 8)
        fast = [reply_of(admin, keys, cid, timeout=8) for cid in (ping, profile, post)]
        assert not admin.exists(keys.response(slow_post)) and not admin.exists(keys.response(slow_read))
        slow = [reply_of(admin, keys, cid, timeout=10) for cid in (slow_post, slow_read)]
    assert [r["status"] for r in fast] == ["ok", "ok", "ok"]
    # Answered at the deadline, not when the platform finally answers (it never does here).
    assert (slow[0]["status"], slow[0]["error"]) == ("unknown", "request_failed")
    assert (slow[1]["status"], slow[1]["error"]) == ("error", "request_failed")


@pytest.mark.slow
def test_a_full_lane_answers_busy_at_once_and_runs_nothing(redis_urls, admin, tmp_path, hanging_moltbook, fast_x):
    keys = redis_urls.keys
    extra = {"ROUTER_PLATFORM_CONCURRENCY": "1", "ROUTER_PLATFORM_BACKLOG": "0"}
    with worker(redis_urls, tmp_path, hanging_moltbook, fast_x, **extra):
        first = push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 6)
        second = push(admin, keys, "CREATE_POST", {"platform": "moltbook", "text": "wait", "title": "t"}, 6)
        busy = reply_of(admin, keys, second, timeout=5)
        assert not admin.exists(keys.response(first))
        reply_of(admin, keys, first, timeout=10)
    assert (busy["status"], busy["error"]) == ("error", "busy") and busy["retry_after"] > 0
    assert hanging_moltbook.posts == {}
