"""Daily quotas per platform and effect kind, counted in Redis so every router shares them.

A check takes a unit first (INCR) and gives it back (DECR) when that went over the limit. INCR is
atomic, so of any number of routers racing for the last units exactly the limit get one; a racer
may briefly see a count one too high and be refused (never the other way round). A unit taken
for a command that then did not happen (refused by a later check, or answered `error`) is given
back by `refund`. Days are UTC days of the injected clock; the key of a day outlives it by a day.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged, seconds_until
from router.bounds.settings import PLATFORMS, BoundsSettings

DAY = 24 * 3600


@dataclass(frozen=True)
class QuotaUnit:
    """One unit taken from a day's counter; `refund` puts it back on the same day's key."""

    key: str


def day_of(now: float) -> str:
    return time.strftime("%Y%m%d", time.gmtime(now))


class DailyQuotas:
    def __init__(self, settings: BoundsSettings, prefix: str) -> None:
        self.settings = settings
        self.prefix = prefix  # e.g. "{safeclaw}:router:quota:"

    def key(self, platform: str, kind: str, now: float) -> str:
        return f"{self.prefix}{platform}:{kind}:{day_of(now)}"

    def take(self, conn: Counters, effect: EffectLike, now: float) -> QuotaUnit | Denial | None:
        """A unit of today's quota, a Denial when none is left, or None when the scope has no quota."""
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        staged = self.stage(pipe, effect, now)
        return None if staged is None else staged.take(conn, pipe)

    def stage(self, pipe: Any, effect: EffectLike, now: float) -> Staged[QuotaUnit] | None:
        limit = self.settings.daily_limit(effect.platform, effect.kind, now)
        if limit is None:
            return None
        key = self.key(effect.platform, effect.kind, now)
        pipe.incr(key)
        pipe.expire(key, 2 * DAY)
        return Staged(2, lambda conn, answers: self._settle(conn, int(answers[0]), key, limit, effect, now))

    def _settle(self, conn: Counters, used: int, key: str, limit: tuple[int, str], effect: EffectLike,
                now: float) -> QuotaUnit | Denial:
        cap, source = limit
        if used <= cap:
            return QuotaUnit(key)
        conn.decr(key)
        retry_after = seconds_until((now // DAY + 1) * DAY, now)  # the next UTC midnight
        who = "the router's quota" if source == "quota" else f"{effect.platform}'s own daily limit"
        return Denial(
            "quota_exceeded",
            f"{effect.platform} {effect.kind} refused: {who} of {cap} a day is used up "
            f"(ROUTER_QUOTAS); it resets at 00:00 UTC, in {retry_after}s",
            retry_after,
        )

    def refund(self, conn: Counters, unit: QuotaUnit) -> None:
        conn.decr(unit.key)

    def usage(self, conn: Counters, now: float) -> dict[str, dict[str, dict[str, int]]]:
        """`{platform: {kind: {limit, used}}}` for today, as the heartbeat and dashboard show it."""
        scopes: list[tuple[str, str, int]] = []
        for platform in PLATFORMS:
            for kind in ("post", "reply", "like", "delete"):
                daily = self.settings.daily_limit(platform, kind, now)
                if daily is not None:
                    scopes.append((platform, kind, daily[0]))
        pipe = conn.pipeline(transaction=False)
        for platform, kind, _limit in scopes:
            pipe.get(self.key(platform, kind, now))
        counts: list[Any] = pipe.execute()
        usage: dict[str, dict[str, dict[str, int]]] = {}
        for (platform, kind, limit), raw in zip(scopes, counts, strict=True):
            used = min(limit, max(0, int(raw or 0)))  # a racer's passing extra unit is not shown
            usage.setdefault(platform, {})[kind] = {"limit": limit, "used": used}
        return usage
