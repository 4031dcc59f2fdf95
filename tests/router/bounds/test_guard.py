"""All bounds together: which refusal wins, and what each outcome keeps or gives back."""

from __future__ import annotations

from router.bounds import Denial
from router.bounds.guard import HardBounds
from tests.router.bounds.bounds_helpers import NOON, NOTICES, PREFIX, FakeEffect, router_conn, settings


def bounds(**env: str) -> HardBounds:
    return HardBounds(settings(**env), PREFIX, NOTICES)


def comment(text: str) -> FakeEffect:
    return FakeEffect("moltbook", "reply", text, "p1")


def used(guard: HardBounds, conn, kind: str = "reply", now: float = NOON) -> int:
    return guard.status(conn, now)["quotas"]["moltbook"][kind]["used"]


def test_a_refusal_gives_back_what_earlier_bounds_took(redis_urls):
    guard = bounds()
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("first words"), "c1", NOON) is None
        assert used(guard, conn) == 1
        paced = guard.check(conn, comment("other words entirely"), "c2", NOON + 1)
        assert isinstance(paced, Denial) and paced.reason == "paced"
        assert used(guard, conn) == 1  # the quota unit it took came back
        duplicate = guard.check(conn, comment("first words"), "c3", NOON + 30)
        assert isinstance(duplicate, Denial) and duplicate.reason == "duplicate_content"
        assert used(guard, conn) == 1
        assert guard.check(conn, comment("a third thought"), "c4", NOON + 31) is None  # pace slot freed


def test_an_exhausted_quota_is_reported_before_pacing(redis_urls):
    guard = bounds(ROUTER_QUOTAS="moltbook:reply=1")
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("one"), "c1", NOON) is None
        refused = guard.check(conn, comment("two"), "c2", NOON + 1)
        assert isinstance(refused, Denial) and refused.reason == "quota_exceeded"


def test_error_gives_back_quota_text_and_pacing_but_a_429_keeps_the_pace(redis_urls):
    guard = bounds()
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("words"), "c1", NOON) is None
        guard.record(conn, comment("words"), "c1", "error", "rate_limited", NOON + 1)
        assert used(guard, conn) == 0
        refused = guard.check(conn, comment("words"), "c2", NOON + 2)
        assert isinstance(refused, Denial) and refused.reason == "paced"  # not duplicate: text given back
        assert guard.check(conn, comment("words"), "c3", NOON + 20) is None
        guard.record(conn, comment("words"), "c3", "error", "auth_failed", NOON + 21)
        assert guard.check(conn, comment("words"), "c4", NOON + 22) is None  # refused, not made: slot back


def test_ok_and_unknown_keep_everything_and_later_refusals_give_it_back(redis_urls):
    guard = bounds()
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("sent for sure"), "c1", NOON) is None
        guard.record(conn, comment("sent for sure"), "c1", "ok", None, NOON)
        assert guard.check(conn, comment("maybe sent"), "c2", NOON + 20) is None
        guard.record(conn, comment("maybe sent"), "c2", "unknown", "request_failed", NOON + 21)
        assert used(guard, conn) == 2
        assert isinstance(guard.check(conn, comment("maybe sent"), "c3", NOON + 40), Denial)
        assert guard.check(conn, comment("waits for approval"), "c4", NOON + 60) is None
        guard.record(conn, comment("waits for approval"), "c4", "pending_approval", "approval_required", NOON)
        assert used(guard, conn) == 2
        assert guard.check(conn, comment("waits for approval"), "c5", NOON + 61) is None


def test_an_open_circuit_refuses_first_and_the_status_shows_it(redis_urls):
    guard = bounds(ROUTER_CIRCUIT_FAILURES="1", ROUTER_MOLTBOOK_ACCOUNT_CREATED="2026-11-28T00:00:00Z")
    post = FakeEffect("moltbook", "post", "hello")
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, post, "p1", NOON) is None
        guard.record(conn, post, "p1", "unknown", "request_failed", NOON)
        refused = guard.check(conn, post, "p2", NOON + 1)
        assert isinstance(refused, Denial) and refused.reason == "circuit_open"
        status = guard.status(conn, NOON + 1)
    assert status["circuits"] == {"moltbook": {"open_until": NOON + 900}}
    assert status["quotas"]["moltbook"]["post"] == {"limit": 5, "used": 1}
    assert status["quotas"]["moltbook"]["reply"] == {"limit": 20, "used": 0}
    assert status["new_account"] == ["moltbook"]


def test_everything_counted_survives_a_redis_restart(redis_urls):
    """No MULTI and no script: each write is a plain command, so the AOF replays it (see router.config.redis_acl)."""
    guard = bounds(ROUTER_QUOTAS="moltbook:reply=1", ROUTER_CIRCUIT_FAILURES="1")
    post = FakeEffect("moltbook", "post", "hello")
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("said once"), "c1", NOON) is None
        guard.record(conn, comment("said once"), "c1", "ok", None, NOON)
        guard.record(conn, post, "p1", "unknown", "request_failed", NOON)
    redis_urls.server.restart()
    fresh = bounds(ROUTER_QUOTAS="moltbook:reply=1,moltbook:post=9", ROUTER_CIRCUIT_FAILURES="1")
    with router_conn(redis_urls.router_url) as conn:
        assert used(fresh, conn) == 1
        admin = redis_urls.admin_client()
        assert admin.zcard(fresh.pacing.key("moltbook", "reply")) == 1
        assert admin.zcard(fresh.duplicates.key("moltbook")) == 1
        admin.close()
        refused = fresh.check(conn, post, "p2", NOON + 1)
        assert isinstance(refused, Denial) and refused.reason == "circuit_open"


def round_trips(conn) -> list[str]:
    """What each round trip to Redis sent, from now on (a pipeline is one)."""
    sent: list[str] = []
    real_pipeline, real_command = conn.pipeline, conn.execute_command

    def pipeline(*args, **kwargs):
        pipe = real_pipeline(*args, **kwargs)
        execute = pipe.execute

        def counted():
            sent.append(",".join(str(command[0][0]) for command in pipe.command_stack))
            return execute()

        pipe.execute = counted
        return pipe

    def command(*args, **options):
        sent.append(str(args[0]))
        return real_command(*args, **options)

    conn.pipeline, conn.execute_command = pipeline, command
    return sent


def test_all_four_bounds_take_one_round_trip_and_a_refusal_gives_the_others_back(redis_urls):
    guard = bounds(ROUTER_CIRCUIT_FAILURES="1")
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, comment("warming the history up"), "c0", NOON) is None  # reads it once
        guard.record(conn, comment("warming the history up"), "c0", "ok", None, NOON)
        sent = round_trips(conn)
        assert guard.check(conn, comment("a first reply of its own"), "c1", NOON + 60) is None
        assert len(sent) == 1, sent  # circuit, quota, pacing and duplicate guard together
        assert all(name in sent[0] for name in ("GET", "INCRBY", "ZADD")), sent
        guard.record(conn, comment("a first reply of its own"), "c1", "unknown", "request_failed", NOON + 61)
        refused = guard.check(conn, comment("a second, different reply"), "c2", NOON + 120)
        assert isinstance(refused, Denial) and refused.reason == "circuit_open"
        assert used(guard, conn, now=NOON + 120) == 2  # the refused one's unit came back
        guard.record(conn, comment("some success"), "c3", "ok", None, NOON + 2000)  # the circuit closes
        assert guard.check(conn, comment("a second, different reply"), "c4", NOON + 2001) is None  # not a duplicate


def test_a_success_after_a_clean_check_costs_no_round_trip_and_one_after_failures_resets(redis_urls):
    guard = bounds(ROUTER_CIRCUIT_FAILURES="3")
    post = FakeEffect("bsky", "post", "words for a clean circuit")
    with router_conn(redis_urls.router_url) as conn:
        assert guard.check(conn, post, "p1", NOON) is None
        sent = round_trips(conn)
        guard.record(conn, post, "p1", "ok", None, NOON + 1)
        assert sent == []  # closed, no failure counted when checked: nothing to reset
        for n in range(2):
            guard.record(conn, FakeEffect("bsky", "post", f"failed {n}"), f"f{n}", "unknown", "request_failed", NOON)
        assert guard.check(conn, FakeEffect("bsky", "post", "after two failures"), "p2", NOON + 2) is None
        sent.clear()
        guard.record(conn, FakeEffect("bsky", "post", "after two failures"), "p2", "ok", None, NOON + 3)
        assert sent == ["DEL,GETDEL"]  # it saw the failures: the count is reset
        for n in range(2):
            guard.record(conn, FakeEffect("bsky", "post", f"again {n}"), f"g{n}", "unknown", "request_failed", NOON)
        assert guard.check(conn, FakeEffect("bsky", "post", "still closed"), "p3", NOON + 4) is None
