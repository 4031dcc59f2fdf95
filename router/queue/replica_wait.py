"""Durable before acting: a command's claim reaches the replicas before its effect, and its done
record before its reply (ROUTER_REDIS_MIN_REPLICAS, default 0: one Redis, no wait).

Redis replicates asynchronously: a primary that fails right after acknowledging a claim may take
the claim with it, and the replica promoted in its place would let the same command run again. With
`ROUTER_REDIS_MIN_REPLICAS=n`, after the claim and before the audit line and the platform call the
router asks `WAIT n timeout`; fewer than `n` replicas acknowledging in
`ROUTER_REDIS_REPLICA_TIMEOUT_MS` means the command is not run: it is answered `not sent` and what
it took (the claim, the bounds' shares) is given back, so the same command sent again is checked
again. Not run here is all the answer can promise: when the primary is cut off from its replicas
(a split), the queue item reached them before the claim did, and a replica promoted in its place
runs it once; the reply says so, and its sender is told to look before sending it again. The done
record waits the same way in the reply's own round trip, before the reply is pushed.

WAIT waits for the writes of the connection it is sent on. The claim rode another round trip, on
whichever pooled connection that took, so `claim_durable` writes a marker of its own first and waits
on the same connection: Redis replicates in one order, so a replica that holds the marker holds
every write acknowledged before it, the claim among them.
"""

from __future__ import annotations

import logging

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.config.settings import RouterSettings
from router.queue.redis_io import Batch

log = logging.getLogger("safeclaw.router.worker")
NOT_DURABLE = "not_durable"
MARKER_TTL_SECONDS = 60


class ReplicaWait:
    def __init__(self, settings: RouterSettings, conn: redis.Redis) -> None:
        self.needed = settings.redis_min_replicas
        self.timeout_ms = settings.redis_replica_timeout_ms
        self.conn = conn
        self.marker = f"{settings.keys.router_prefix}replicated:{settings.router_id}"

    def claim_durable(self, envelope: CommandEnvelope) -> Reply | None:
        """None once every write so far (the claim) is on `needed` replicas, or none are needed;
        else the `not sent` reply. Redis unavailable raises, as for any step between claim and run."""
        if not self.needed:
            return None
        batch = Batch()
        batch.set(self.marker, envelope.id, ex=MARKER_TTL_SECONDS)
        self.wait_in(batch)
        try:
            acknowledged = int(batch.send(self.conn)[-1])
        except redis.ResponseError as exc:  # NOPERM: an ACL file from before WAIT was granted
            return self._not_sent(envelope, f"Redis refused WAIT ({exc}); regenerate the ACL file "
                                            "(./safeclaw python -m router.config.redis_acl)")
        if acknowledged >= self.needed:
            return None
        log.warning("command %s not run: its claim reached %d of %d replica(s) in %d ms", envelope.id,
                    acknowledged, self.needed, self.timeout_ms)
        return self._not_sent(
            envelope, f"its claim reached {acknowledged} of the {self.needed} Redis replica(s) it needs "
                      f"within {self.timeout_ms} ms (ROUTER_REDIS_MIN_REPLICAS). If Redis fails over "
                      "now, the replica that takes over may still hold the command and run it once "
                      "(it is never run twice): look on the platform before sending it again")

    def wait_in(self, batch: Batch) -> int | None:
        """Add the wait to a round trip after its writes (the done records, before the replies):
        the index of its answer, or None when no replica is needed."""
        if not self.needed:
            return None
        batch.commands.append(("WAIT", self.needed, self.timeout_ms))
        return len(batch.commands) - 1

    def check_records(self, answers: list[object], at: int | None, ids: list[str]) -> None:
        """Say in the log when done records went out short of their replicas (the replies were
        pushed at the timeout all the same: the effect happened, and the sender must learn it)."""
        if at is None or not ids or at >= len(answers):
            return
        acknowledged = int(answers[at])  # type: ignore[call-overload]
        if acknowledged < self.needed:
            log.warning("done record(s) of %s reached %d of %d replica(s) in %d ms: a failover now "
                        "could lose them", ", ".join(ids), acknowledged, self.needed, self.timeout_ms)

    @staticmethod
    def _not_sent(envelope: CommandEnvelope, why: str) -> Reply:
        return Reply(envelope.id, Status.ERROR, f"{envelope.action} was not sent: {why}", error=NOT_DURABLE)
