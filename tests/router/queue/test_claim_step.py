"""The claim's script (`router.queue.claim_step`) on a real redis-server, as the router user: of two
claims of one command id only the winner takes the bounds; a true duplicate is still refused; the
script is loaded again after Redis forgot it; and a claim with its bounds survives an AOF replay
under SafeClaw's ACL (the `default` user off)."""

from __future__ import annotations

from typing import Any

import redis

from protocol.commands import CommandEnvelope
from router.bounds import Denial
from router.bounds.guard import HardBounds, Held
from router.queue.records import Claim, CommandRecords
from tests.router.bounds.bounds_helpers import NOON, NOTICES, PREFIX, FakeEffect, router_conn, settings
from tests.router.router_helpers import OWNER_TURN, settings_for
from tests.support.redis_server import RedisServer

WORDS = "the same words, sent twice by a sender that retried"


def comment(text: str = WORDS) -> FakeEffect:
    return FakeEffect("moltbook", "reply", text, "p1")  # quota, pacing, duplicates and circuit apply


def command(text: str = WORDS) -> CommandEnvelope:
    return CommandEnvelope.new("MOLTBOOK_COMMENT", {"post_id": "p1", "text": text}, "t", 60, origin=OWNER_TURN)


def claim_with_bounds(conn: redis.Redis, claim: Claim, guard: HardBounds, now: float = NOON) -> Any:
    """The claim and the bounds in one script; the bounds' outcome, or None when the claim was lost."""
    gated = claim.commands()
    staged = guard.stage_check(gated, comment(claim.envelope.params["text"]), now)
    pipe = conn.pipeline(transaction=False)
    answers = claim.stage(pipe, gated).take(conn, pipe)
    return None if answers is None else staged.settle(conn, answers)


def counted(conn: redis.Redis, guard: HardBounds) -> tuple[int, int, int]:
    """The quota units, pacing slots and sent texts counted on Moltbook replies."""
    used = guard.status(conn, NOON)["quotas"]["moltbook"]["reply"]["used"]
    return used, conn.zcard(guard.pacing.key("moltbook", "reply")), conn.zcard(guard.duplicates.key("moltbook"))


def test_two_claims_of_one_id_take_the_bounds_once(redis_urls, tmp_path):
    guard = HardBounds(settings(), PREFIX, NOTICES)
    with router_conn(redis_urls.router_url) as conn:
        records = CommandRecords(conn, settings_for(redis_urls.router_url, tmp_path))
        envelope = command()
        first, second = records.claim_of(envelope), records.claim_of(envelope)
        taken = claim_with_bounds(conn, first, guard)
        assert first.won and first.bound
        assert isinstance(taken, Held) and taken.quota and taken.pace and taken.sent and taken.circuit
        assert claim_with_bounds(conn, second, guard, NOON + 0.001) is None  # the copy takes nothing
        assert not second.won and not second.bound
        assert counted(conn, guard) == (1, 1, 1)
        # Another command with the same words is still a duplicate (and too soon): the winner's
        # shares are there, and its refusal gives its own back.
        other = records.claim_of(command())
        refused = claim_with_bounds(conn, other, guard, NOON + 1)
        assert other.won and isinstance(refused, Denial) and refused.reason == "paced"
        assert counted(conn, guard) == (1, 1, 1)


def test_the_script_is_loaded_again_after_redis_forgot_it(redis_urls, tmp_path, admin):
    guard = HardBounds(settings(), PREFIX, NOTICES)
    with router_conn(redis_urls.router_url) as conn:
        records = CommandRecords(conn, settings_for(redis_urls.router_url, tmp_path))
        assert isinstance(claim_with_bounds(conn, records.claim_of(command("first")), guard), Held)
        admin.script_flush()  # as after a restart or a failover: EVALSHA answers NOSCRIPT
        claim = records.claim_of(command("second, after the flush"))
        assert isinstance(claim_with_bounds(conn, claim, guard, NOON + 600), Held) and claim.won
        used, _, sent = counted(conn, guard)  # (the first pacing slot is past Moltbook's gap)
        assert (used, sent) == (2, 2)


def test_a_claim_and_its_bounds_survive_a_restart_from_the_aof(tmp_path):
    """Redis writes the script's effects to the AOF as MULTI/EXEC; Redis before the fix of
    redis/redis#14541 replays that as the `default` user and drops what it may not run."""
    server = RedisServer(persistent=True)
    server.start()
    try:
        guard = HardBounds(settings(), PREFIX, NOTICES)
        envelope = command()
        with router_conn(server.router_url) as conn:
            records = CommandRecords(conn, settings_for(server.router_url, tmp_path))
            assert isinstance(claim_with_bounds(conn, records.claim_of(envelope), guard), Held)
        server.restart()
        with router_conn(server.router_url) as conn:
            assert conn.get(server.keys.idempotency(envelope.id)) is not None
            assert conn.get(server.keys.fingerprint(envelope.id)) is not None
            assert counted(conn, guard) == (1, 1, 1)
            again = CommandRecords(conn, settings_for(server.router_url, tmp_path)).claim_of(envelope)
            assert claim_with_bounds(conn, again, guard, NOON + 1) is None  # still claimed: not run twice
    finally:
        server.cleanup()
