"""A router blocks only when it took nothing: the round trip that answers commands takes the next
ones with non-blocking moves, so a command already taken never waits for a blocking move that
hopes for one more (bursts of PINGs held one command about a second)."""

from __future__ import annotations

from typing import Any

from router.queue import redis_io
from tests.router.router_helpers import WorkerThread, reply_of, settings_for, wait_until


def test_no_round_trip_that_answers_commands_blocks(redis_urls, admin, tmp_path, monkeypatch):
    keys = redis_urls.keys
    sent: list[list[tuple[Any, ...]]] = []
    real_send = redis_io.Batch.send

    def send(self: redis_io.Batch, conn: Any) -> list[Any]:
        sent.append(list(self.commands))
        return real_send(self, conn)

    monkeypatch.setattr(redis_io.Batch, "send", send)
    thread = WorkerThread(settings_for(redis_urls.router_url, tmp_path))
    blocking_with_commands_in_hand: list[int] = []
    real_blmove = thread.worker.conn.blmove

    def blmove(*args: Any) -> Any:
        # Each queue's loop blocks only with nothing of its own queue in hand.
        taker = next(t for t in thread.worker.takers.values() if t.sender.queue == args[0])
        blocking_with_commands_in_hand.append(len(taker.taken))
        return real_blmove(*args)

    thread.worker.conn.blmove = blmove  # type: ignore[method-assign]
    from protocol.commands import CommandEnvelope
    from tests.router.router_helpers import OWNER_TURN

    with thread:
        for burst in (2, 4, 8):
            envelopes = [CommandEnvelope.new("PING", {}, "t", ttl_seconds=30, origin=OWNER_TURN)
                         for _ in range(burst)]
            admin.lpush(keys.command_queue, *[e.to_json() for e in envelopes])
            replies = [reply_of(admin, keys, e.id, timeout=20) for e in envelopes]
            assert all(r["status"] == "ok" for r in replies)
        wait_until(lambda: admin.llen(keys.processing("r1")) == 0, "the processing list to empty")
    answering = [batch for batch in sent if any(cmd[0] == "LPUSH" for cmd in batch)]
    moves = [[cmd[0] for cmd in batch if cmd[0] in ("LMOVE", "BLMOVE")] for batch in answering]
    # A blocking move is only ever the one move of its round trip: nothing taken waits behind it.
    assert answering and all(m == ["BLMOVE"] or "BLMOVE" not in m for m in moves), moves
    assert any(len(m) > 1 for m in moves)  # the bursts were taken several at a time
    assert set(blocking_with_commands_in_hand) <= {0}
