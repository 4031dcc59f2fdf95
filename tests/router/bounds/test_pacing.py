"""Platform pacing on a real redis-server: Moltbook's gaps, new-account mode, racing routers."""

from __future__ import annotations

import threading

from router.bounds import Denial
from router.bounds.pacing import PaceSlot, Pacing
from tests.router.bounds.bounds_helpers import NOON, PREFIX, FakeEffect, router_conn, settings

POST = FakeEffect("moltbook", "post", "hello")
COMMENT = FakeEffect("moltbook", "reply", "hi", "p1")


def pacing(**env: str) -> Pacing:
    return Pacing(settings(**env), f"{PREFIX}pace:")


def test_moltbook_one_post_per_30_minutes(redis_urls):
    bound = pacing()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, POST, NOON), PaceSlot)
        early = bound.take(conn, POST, NOON + 1799.5)
        assert isinstance(early, Denial) and early.reason == "paced" and early.retry_after == 1
        assert "1800s" in early.message
        assert isinstance(bound.take(conn, POST, NOON + 1800), PaceSlot)


def test_moltbook_one_comment_per_20_seconds_posts_apart(redis_urls):
    bound = pacing()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, COMMENT, NOON), PaceSlot)
        early = bound.take(conn, COMMENT, NOON + 5)
        assert isinstance(early, Denial) and early.retry_after == 15
        assert isinstance(bound.take(conn, POST, NOON + 5), PaceSlot)  # another kind, another gap
        assert isinstance(bound.take(conn, COMMENT, NOON + 20), PaceSlot)
        assert bound.take(conn, FakeEffect("bsky", "post", "x"), NOON) is None  # not paced by default


def test_new_account_posts_once_per_two_hours_for_its_first_day(redis_urls):
    bound = pacing(ROUTER_MOLTBOOK_ACCOUNT_CREATED="2026-11-28T11:00:00Z")
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, POST, NOON), PaceSlot)
        refused = bound.take(conn, POST, NOON + 3600)
        assert isinstance(refused, Denial) and refused.retry_after == 3600
        assert "new-account" in refused.message
        assert isinstance(bound.take(conn, POST, NOON + 7200), PaceSlot)
        day_two = NOON + 23 * 3600  # the account is a day old: back to 30 minutes
        assert isinstance(bound.take(conn, POST, day_two), PaceSlot)
        assert isinstance(bound.take(conn, POST, day_two + 1800), PaceSlot)


def test_a_released_slot_lets_the_next_one_through(redis_urls):
    bound = pacing(ROUTER_PACING="bsky:post=600")
    post = FakeEffect("bsky", "post", "x")
    with router_conn(redis_urls.router_url) as conn:
        slot = bound.take(conn, post, NOON)
        assert isinstance(slot, PaceSlot)
        assert isinstance(bound.take(conn, post, NOON + 1), Denial)
        bound.release(conn, slot)
        assert isinstance(bound.take(conn, post, NOON + 2), PaceSlot)
        assert 0 < conn.ttl(bound.key("bsky", "post")) <= 600 + 3600


def test_racing_routers_let_at_most_one_comment_through(redis_urls):
    bound = pacing()
    start = threading.Barrier(6)
    passed: list[bool] = []

    def router() -> None:
        with router_conn(redis_urls.router_url) as conn:
            start.wait()
            passed.append(isinstance(bound.take(conn, COMMENT, NOON), PaceSlot))

    threads = [threading.Thread(target=router) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(passed) == 6 and sum(passed) <= 1
    admin = redis_urls.admin_client()
    assert admin.zcard(bound.key("moltbook", "reply")) == sum(passed)  # refused racers left nothing
    admin.close()
    with router_conn(redis_urls.router_url) as conn:
        later = bound.take(conn, COMMENT, NOON + 20)
        assert isinstance(later, PaceSlot)
