"""Policy: what the router refuses even when the command is valid (kill switch, rates, approvals).

A mind that obeys every injection can still do no more than this allows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from protocol import Keys, Status
from router.registry import Skill
from router.settings import RouterSettings


@dataclass(frozen=True)
class Decision:
    """A refusal: the reply status and the line the user sees."""

    status: Status
    error: str
    message: str


class Policy:
    def __init__(self, settings: RouterSettings, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.keys: Keys = settings.keys
        self.clock = clock

    def check(self, skill: Skill, conn: redis.Redis) -> Decision | None:
        """None when the command may run; otherwise why not. Rate counters live in Redis."""
        if skill.side_effect and self.settings.kill_switch:
            return Decision(Status.DENIED, "kill_switch",
                            f"{skill.name} denied: the router's kill switch is on (ROUTER_KILL_SWITCH)")
        if skill.name in self.settings.require_approval:
            return Decision(Status.PENDING_APPROVAL, "approval_required",
                            f"{skill.name} needs approval by the router's owner; it was not run")
        return self._rate_limit(skill.name, conn)

    def _rate_limit(self, action: str, conn: redis.Redis) -> Decision | None:
        rule = self.settings.rate_limits.get(action)
        if rule is None:
            return None
        now = self.clock()
        window = int(now // rule.window_seconds)
        key = f"{self.keys.router_prefix}ratelimit:{action}:{window}"
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.worker
        pipe.incr(key)
        pipe.expire(key, rule.window_seconds + 1)
        count = int(pipe.execute()[0])
        if count <= rule.limit:
            return None
        retry_after = max(1, math.ceil((window + 1) * rule.window_seconds - now))
        return Decision(
            Status.DENIED, "rate_limited",
            f"{action} rate limit reached ({rule.limit} per {rule.window_seconds}s); "
            f"retry in {retry_after}s",
        )
