"""The owner's rate limits (`ROUTER_RATE_LIMITS`): a counter per rule and window, shared by every
router in Redis (or the one-shot tool's embedded store)."""

from __future__ import annotations

import math

from protocol.commands import CommandEnvelope
from protocol.replies import Status
from router.bounds import Counters
from router.policy.decisions import Decision, RateRule
from router.policy.effects import Effect


def rate_limit_decision(
    rules: list[RateRule], counters: Counters | None, prefix: str, effect: Effect, envelope: CommandEnvelope,
    now: float,
) -> Decision | None:
    """A refusal when a rule on the effect's scope is past its limit in this window, else None (the
    command's unit is counted)."""
    for rule in rules:
        if effect.scope not in rule.scopes:
            continue
        if counters is None:
            return Decision(
                Status.DENIED,
                "rate_limited",
                f"{envelope.action} is rate-limited ({rule.name}) and its counter has nowhere to be "
                "kept (no Redis, no embedded store)",
            )
        window = int(now // rule.window_seconds)
        key = f"{prefix}ratelimit:{rule.name}:{window}"
        pipe = counters.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        pipe.incr(key)
        pipe.expire(key, rule.window_seconds + 1)
        count = int(pipe.execute()[0])
        if count > rule.limit:
            retry_after = max(1, math.ceil((window + 1) * rule.window_seconds - now))
            return Decision(
                Status.DENIED,
                "rate_limited",
                f"{envelope.action} ({effect.scope}) rate limit {rule.name} reached ({rule.limit} per "
                f"{rule.window_seconds}s); retry in {retry_after}s",
                retry_after,
            )
    return None
