"""Daily quotas on a real redis-server, as the router's ACL user, shared by several connections."""

from __future__ import annotations

import threading

from router.bounds import Denial
from router.bounds.quotas import DailyQuotas, QuotaUnit
from tests.router.bounds.bounds_helpers import NOON, PREFIX, FakeEffect, router_conn, settings

POST = FakeEffect("moltbook", "post", "hello")


def quotas(**env: str) -> DailyQuotas:
    return DailyQuotas(settings(**env), f"{PREFIX}quota:")


def test_the_limit_passes_then_the_rest_is_refused_until_utc_midnight(redis_urls):
    bound = quotas()
    with router_conn(redis_urls.router_url) as conn:
        taken = [bound.take(conn, POST, NOON + i) for i in range(7)]
    assert all(isinstance(t, QuotaUnit) for t in taken[:5])
    refusal = taken[5]
    assert isinstance(refusal, Denial) and refusal.reason == "quota_exceeded"
    assert refusal.retry_after == 12 * 3600 - 5
    assert "5 a day" in refusal.message and "ROUTER_QUOTAS" in refusal.message
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, POST, NOON + 12 * 3600), QuotaUnit)  # a new UTC day


def test_platforms_and_kinds_count_apart(redis_urls):
    bound = quotas(ROUTER_QUOTAS="post=1,like=2")
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, POST, NOON), QuotaUnit)
        assert isinstance(bound.take(conn, POST, NOON), Denial)
        assert isinstance(bound.take(conn, FakeEffect("bsky", "post", "x"), NOON), QuotaUnit)
        like = FakeEffect("moltbook", "like", target="p1")
        assert [isinstance(bound.take(conn, like, NOON), QuotaUnit) for _ in range(3)] == [True, True, False]
        assert bound.take(conn, FakeEffect("moltbook", "delete", target="p1"), NOON) is None
        assert bound.take(conn, FakeEffect("moltbook", "read"), NOON) is None


def test_zero_refuses_everything_and_a_refund_gives_a_unit_back(redis_urls):
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(quotas(ROUTER_QUOTAS="moltbook:post=0").take(conn, POST, NOON), Denial)
        bound = quotas(ROUTER_QUOTAS="post=1")
        unit = bound.take(conn, POST, NOON)
        assert isinstance(unit, QuotaUnit)
        assert isinstance(bound.take(conn, POST, NOON), Denial)
        bound.refund(conn, unit)
        assert isinstance(bound.take(conn, POST, NOON), QuotaUnit)


def test_moltbooks_own_daily_comment_cap_applies_below_a_raised_quota(redis_urls):
    bound = quotas(ROUTER_QUOTAS="reply=80")
    comment = FakeEffect("moltbook", "reply", "hi", "p1")
    with router_conn(redis_urls.router_url) as conn:
        results = [bound.take(conn, comment, NOON) for _ in range(51)]
    assert sum(isinstance(r, QuotaUnit) for r in results) == 50
    last = results[-1]
    assert isinstance(last, Denial) and "moltbook's own daily limit of 50" in last.message


def test_usage_is_what_the_heartbeat_shows(redis_urls):
    bound = quotas(ROUTER_QUOTAS="x:delete=4")
    with router_conn(redis_urls.router_url) as conn:
        for _ in range(3):
            bound.take(conn, POST, NOON)
        usage = bound.usage(conn, NOON)
    assert usage["moltbook"]["post"] == {"limit": 5, "used": 3}
    assert usage["moltbook"]["reply"] == {"limit": 20, "used": 0}
    assert usage["x"]["delete"] == {"limit": 4, "used": 0}
    assert set(usage) == {"bsky", "mastodon", "moltbook", "reddit", "x"}
    assert "delete" not in usage["bsky"]


def test_racing_routers_never_exceed_the_quota(redis_urls):
    """Eight connections (as eight routers) race 80 takes for 5 units: exactly 5 get one."""
    bound = quotas()
    start = threading.Barrier(8)
    passed: list[int] = []
    lock = threading.Lock()

    def router() -> None:
        with router_conn(redis_urls.router_url) as conn:
            start.wait()
            mine = sum(isinstance(bound.take(conn, POST, NOON), QuotaUnit) for _ in range(10))
        with lock:
            passed.append(mine)

    threads = [threading.Thread(target=router) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sum(passed) == 5
    with router_conn(redis_urls.router_url) as conn:
        assert bound.usage(conn, NOON)["moltbook"]["post"] == {"limit": 5, "used": 5}
        assert 0 < conn.ttl(bound.key("moltbook", "post", NOON)) <= 2 * 86400
