"""The circuit breaker on a real redis-server: opening, the owner's notice, half-open, races."""

from __future__ import annotations

import json
import threading

import pytest

from router.bounds import Denial
from router.bounds.circuit import CircuitBreaker, outcome_of
from tests.router.bounds.bounds_helpers import NOON, NOTICES, PREFIX, FakeEffect, router_conn, settings

POST = FakeEffect("moltbook", "post", "hello")
READ = FakeEffect("moltbook", "read")


def breaker(**env: str) -> CircuitBreaker:
    return CircuitBreaker(settings(**env), f"{PREFIX}circuit:", NOTICES)


def notices(redis_urls) -> list[dict]:
    admin = redis_urls.admin_client()
    try:
        return [json.loads(raw) for raw in admin.lrange(NOTICES, 0, -1)]
    finally:
        admin.close()


@pytest.mark.parametrize(
    ("status", "error", "outcome"),
    [
        ("ok", None, "success"),
        ("unknown", "request_failed", "failure"),
        ("unknown", "crashed", "failure"),
        ("error", "rate_limited", "failure"),
        ("error", "auth_failed", "failure"),
        ("error", "not_found", "neutral"),
        ("error", "invalid_params", "neutral"),
        ("denied", "quota_exceeded", "neutral"),
        ("pending_approval", "approval_required", "neutral"),
    ],
)
def test_what_counts(status, error, outcome):
    assert outcome_of(status, error) == outcome


def test_five_failures_in_a_row_open_the_circuit_for_15_minutes_and_tell_the_owner(redis_urls):
    bound = breaker()
    with router_conn(redis_urls.router_url) as conn:
        for i in range(4):
            bound.record(conn, POST, "unknown", "request_failed", NOON + i)
            assert bound.check(conn, POST, NOON + i) is None
        assert notices(redis_urls) == []
        bound.record(conn, POST, "error", "rate_limited", NOON + 4, conversation="autonomy")
        refused = bound.check(conn, FakeEffect("moltbook", "like", None, "p"), NOON + 5)
        assert isinstance(refused, Denial) and refused.reason == "circuit_open"
        assert refused.retry_after == 899
        assert bound.check(conn, READ, NOON + 5) is None  # reads go on
        assert bound.check(conn, FakeEffect("bsky", "post", "x"), NOON + 5) is None  # other platforms too
        assert bound.open_circuits(conn, NOON + 5) == {"moltbook": NOON + 904}
    [notice] = notices(redis_urls)
    assert notice["type"] == "circuit_open" and notice["platform"] == "moltbook"
    assert notice["until"] == NOON + 904 and "5 failed writes in a row" in notice["message"]
    assert notice["ts"] == NOON + 4 and notice["conversation"] == "autonomy"


def test_a_success_resets_the_count_and_neutral_errors_and_reads_do_not_count(redis_urls):
    bound = breaker()
    with router_conn(redis_urls.router_url) as conn:
        for _ in range(4):
            bound.record(conn, POST, "unknown", "request_failed", NOON)
        bound.record(conn, POST, "ok", None, NOON)
        for _ in range(4):
            bound.record(conn, POST, "unknown", "request_failed", NOON)
            bound.record(conn, POST, "error", "not_found", NOON)
            bound.record(conn, READ, "error", "request_failed", NOON)
        assert bound.check(conn, POST, NOON) is None
        bound.record(conn, POST, "unknown", "request_failed", NOON)
        assert isinstance(bound.check(conn, POST, NOON), Denial)


def test_after_the_pause_one_failure_reopens_and_one_success_closes(redis_urls):
    bound = breaker(ROUTER_CIRCUIT_FAILURES="2", ROUTER_CIRCUIT_OPEN_SECONDS="60")
    with router_conn(redis_urls.router_url) as conn:
        bound.record(conn, POST, "error", "auth_failed", NOON)
        bound.record(conn, POST, "error", "auth_failed", NOON)
        assert isinstance(bound.check(conn, POST, NOON + 59), Denial)
        assert bound.check(conn, POST, NOON + 60) is None  # half-open: one may try
        bound.record(conn, POST, "unknown", "request_failed", NOON + 61)
        assert isinstance(bound.check(conn, POST, NOON + 62), Denial)  # reopened at once
        assert bound.check(conn, POST, NOON + 121) is None
        bound.record(conn, POST, "ok", None, NOON + 122)
        bound.record(conn, POST, "unknown", "request_failed", NOON + 123)
        assert bound.check(conn, POST, NOON + 124) is None  # closed: the count starts again
        assert bound.open_circuits(conn, NOON + 124) == {}
    kinds = [n["type"] for n in reversed(notices(redis_urls))]
    assert kinds == ["circuit_open", "circuit_open", "circuit_closed"]


def test_racing_routers_open_the_circuit_once_and_tell_the_owner_once(redis_urls):
    bound = breaker()
    start = threading.Barrier(8)

    def router() -> None:
        with router_conn(redis_urls.router_url) as conn:
            start.wait()
            bound.record(conn, POST, "unknown", "request_failed", NOON)

    threads = [threading.Thread(target=router) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.check(conn, POST, NOON + 1), Denial)
    assert [n["type"] for n in notices(redis_urls)] == ["circuit_open"]
