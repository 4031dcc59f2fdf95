"""The owner's rate limits (`ROUTER_RATE_LIMITS`): a counter per rule and window, shared by every
router in Redis (or the one-shot tool's embedded store)."""

from __future__ import annotations

import math
from typing import Any

from protocol.commands import CommandEnvelope
from protocol.replies import Status
from router.bounds import Counters, Staged
from router.policy.decisions import Decision, RateRule
from router.policy.effects import Effect


def rate_limit_decision(
    rules: list[RateRule], counters: Counters | None, prefix: str, effect: Effect, envelope: CommandEnvelope,
    now: float,
) -> Decision | None:
    """A refusal when a rule on the effect's scope is past its limit in this window, else None (the
    command's unit is counted)."""
    if not any(effect.scope in rule.scopes for rule in rules):
        return None
    if counters is None:
        name = next(rule.name for rule in rules if effect.scope in rule.scopes)
        return Decision(
            Status.DENIED,
            "rate_limited",
            f"{envelope.action} is rate-limited ({name}) and its counter has nowhere to be "
            "kept (no Redis, no embedded store)",
        )
    pipe = counters.pipeline(transaction=False)  # no MULTI: see router.queue.worker
    staged = stage_rate_limits(rules, pipe, prefix, effect, envelope, now)
    refusal = None if staged is None else staged.take(counters, pipe)
    return refusal if isinstance(refusal, Decision) else None


def stage_rate_limits(
    rules: list[RateRule], pipe: Any, prefix: str, effect: Effect, envelope: CommandEnvelope, now: float
) -> Staged[Decision] | None:
    """The counters of the rules on the effect's scope, queued on a pipeline (or a claim's step,
    `router.queue.claim_step`); settled, the first rule past its limit refuses. None: no rule."""
    counted: list[tuple[RateRule, int]] = []
    for rule in rules:
        if effect.scope in rule.scopes:
            window = int(now // rule.window_seconds)
            key = f"{prefix}ratelimit:{rule.name}:{window}"
            pipe.incr(key)
            pipe.expire(key, rule.window_seconds + 1)
            counted.append((rule, window))
    if not counted:
        return None

    def settle(_conn: Counters, answers: list[Any]) -> Decision | None:
        for (rule, window), count in zip(counted, answers[::2], strict=True):
            if int(count) > rule.limit:
                retry_after = max(1, math.ceil((window + 1) * rule.window_seconds - now))
                return Decision(
                    Status.DENIED,
                    "rate_limited",
                    f"{envelope.action} ({effect.scope}) rate limit {rule.name} reached ({rule.limit} per "
                    f"{rule.window_seconds}s); retry in {retry_after}s",
                    retry_after,
                )
        return None

    return Staged(2 * len(counted), settle)
