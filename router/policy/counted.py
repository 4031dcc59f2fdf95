"""The checks that take a share, the rate limits then the hard bounds, taken with the command's claim
as one atomic step (`router.queue.claim_step`): only the copy of a command that wins its claim
counts against them, so copies of one command can never refuse the one that runs.

Their commands are staged into the claim's script, after the checks before them (kill switch,
origin, secrets, approval) have passed: a command held for the owner takes nothing until it runs.
Settled in the policy's order: a rate limit past its limit refuses first (the bounds' shares then
go back, its own unit stays counted, as it always did); then the bounds (`HardBounds.settle`).
"""

from __future__ import annotations

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Status
from router.bounds import Denial
from router.bounds.guard import HardBounds, Held
from router.policy.decisions import Decision, Gate, RateRule
from router.policy.effects import LOCAL_PLATFORM, Effect
from router.policy.rate_limits import stage_rate_limits


def bounded(effect: Effect) -> bool:
    """The hard bounds apply: a write, anywhere but the router's own notebook."""
    return effect.writes and effect.platform != LOCAL_PLATFORM


class CountedChecks:
    def __init__(self, bounds: HardBounds, rules: list[RateRule], prefix: str, dry_run: bool) -> None:
        self.bounds = bounds
        self.rules = rules
        self.prefix = prefix
        self.dry_run = dry_run

    def with_claim(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis, now: float, gate: Gate
    ) -> Decision | None:
        """The rate limits and the bounds in the claim's step; None when the command may run, or
        when another copy holds the claim (nothing taken: the caller reads `won`, drops this copy)."""
        gated = gate.commands()
        rate = stage_rate_limits(self.rules, gated, self.prefix, effect, envelope, now)
        staged = self.bounds.stage_check(gated, effect, now) if bounded(effect) else None
        pipe = conn.pipeline(transaction=False)  # one round trip: the claim's script
        answers = gate.stage(pipe, gated).take(conn, pipe)
        gate.taken = True
        if not isinstance(answers, list):
            return None
        at = rate.count if rate is not None else 0
        refusal = rate.settle(conn, answers[:at]) if rate is not None else None
        taken = staged.settle(conn, answers[at:]) if staged is not None else None
        if isinstance(refusal, Decision):
            if isinstance(taken, Held):
                self.bounds.give_back(conn, envelope.id, taken)
            return refusal
        return self.refusal(envelope, self.bounds.settle(envelope.id, taken))

    def refusal(self, envelope: CommandEnvelope, denial: Denial | None) -> Decision | None:
        """A bound's refusal as the policy answers it."""
        if denial is None:
            return None
        rehearsal = " (the dry run's own bounds: a real post is not held back by them)"
        rehearsal = rehearsal if self.dry_run else ""
        message = f"{envelope.action}: {denial.message}{rehearsal}"
        return Decision(Status.DENIED, denial.reason, message, denial.retry_after)
