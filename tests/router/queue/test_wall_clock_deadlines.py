"""Deadlines are wall-clock: a platform that trickles its answer a byte at a time is hung up at
the command's deadline, a command's clock runs from when it is taken (one waiting behind a stuck
one in its lane is answered `expired` at its own deadline, never run), a stopping router waits a
bounded time for a body that never ends, the commands waiting in a lane then stay in its list for
the next start, and the router's own delays never count against a platform's circuit."""

from __future__ import annotations

import pytest

from protocol.commands import CommandEnvelope
from router.bounds.circuit import outcome_of
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, WorkerThread, reply_of, settings_for, wait_until
from tests.support.trickle_server import TrickleServer

SKILLS = discover_skills()
KEY = {"MOLTBOOK_API_KEY": "moltbook_sk_" + "trickleKey123"}


def push(admin, keys, action, params, ttl):
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=ttl, origin=OWNER_TURN)
    admin.lpush(keys.command_queue, envelope.to_json())
    return envelope.id


@pytest.fixture
def trickle(request):
    server = TrickleServer(getattr(request, "param", "headers")).start()
    yield server
    server.stop()


def router(redis_urls, tmp_path, platform, **extra):
    settings = settings_for(redis_urls.router_url, tmp_path, MOLTBOOK_API_BASE=platform.url,
                            ROUTER_PLATFORM_CONCURRENCY="1", ROUTER_PLATFORM_BACKLOG="4", **extra)
    return WorkerThread(settings, dict(SKILLS), dict(KEY))


def test_a_trickling_platform_is_hung_up_at_the_deadline_and_the_lane_goes_on(redis_urls, admin, tmp_path,
                                                                               trickle):
    keys = redis_urls.keys
    with router(redis_urls, tmp_path, trickle):
        stuck = push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 3)
        wait_until(lambda: trickle.accepted == 1, "the platform to be reached", 10)
        waiting = [push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 3) for _ in range(2)]
        first = reply_of(admin, keys, stuck, timeout=10)
        behind = [reply_of(admin, keys, cid, timeout=10) for cid in waiting]
        wait_until(lambda: trickle.hung_up >= 1, "the router to hang up on the trickle", 10)
        ping = reply_of(admin, keys, push(admin, keys, "PING", {}, 10), timeout=10)
    assert (first["status"], first["error"]) == ("error", "request_failed")
    # Behind it in the lane, each was answered at its own deadline (its clock ran while it waited).
    assert all(r["status"] in ("expired", "error") for r in behind), behind
    assert ping["status"] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("trickle", ["body"], indirect=True)
def test_a_body_that_never_ends_does_not_keep_a_stopping_router_alive(redis_urls, admin, tmp_path, trickle):
    keys = redis_urls.keys
    thread = router(redis_urls, tmp_path, trickle)
    worker = thread.worker
    thread.thread.start()
    running = push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 60)
    wait_until(lambda: trickle.accepted == 1, "the platform to be reached", 10)
    waiting = push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 60)
    wait_until(lambda: len(admin.lrange(keys.processing("r1"), 0, -1)) == 2, "both taken", 10)
    worker.stop()
    thread.thread.join(timeout=20)
    assert not thread.thread.is_alive(), "the router did not stop while its platform kept talking"
    left = admin.lrange(keys.processing("r1"), 0, -1)
    # Neither answered nor lost: both stay in its list, for the next start's recovery.
    assert any(waiting in item for item in left) and any(running in item for item in left)
    assert not admin.exists(keys.response(waiting))


@pytest.mark.slow
def test_the_next_start_answers_what_a_bounded_shutdown_left(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    platform = TrickleServer("body").start()
    try:
        thread = router(redis_urls, tmp_path, platform)
        thread.thread.start()
        ids = [push(admin, keys, "GET_PROFILE", {"platform": "moltbook"}, 30) for _ in range(2)]
        wait_until(lambda: len(admin.lrange(keys.processing("r1"), 0, -1)) == 2, "both taken", 10)
        thread.worker.stop()
        thread.thread.join(timeout=20)
        assert not thread.thread.is_alive()
    finally:
        platform.stop()  # the platform is gone now: the next start's recovery gets its answer
    with router(redis_urls, tmp_path, platform):
        replies = [reply_of(admin, keys, cid, timeout=40) for cid in ids]
    assert all(r["status"] in ("error", "expired") for r in replies), replies
    assert admin.llen(keys.processing("r1")) == 0


@pytest.mark.parametrize(("status", "error", "counted"), [
    ("unknown", "interrupted", "neutral"),  # the router stopped while it ran
    ("unknown", "queue_deadline", "neutral"),  # its deadline was spent mostly in the router's own lane
    ("unknown", "repeat_in_progress", "neutral"),
    ("expired", "expired", "neutral"),  # its deadline passed before it left the router's queue
    ("unknown", "request_failed", "failure"),
    ("unknown", None, "failure"),
])
def test_only_the_platforms_own_failures_count_for_its_circuit(status, error, counted):
    assert outcome_of(status, error) == counted
