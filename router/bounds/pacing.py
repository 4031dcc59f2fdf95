"""Platform pacing: the least gap between two effects of one kind on one platform, across routers.

Each scope keeps a sorted set of recent attempts scored by time. A check first ADDS its own
entry, then reads the set: if any other entry lies within the gap, it removes its own and is
refused. Because every router adds before it reads, of two racing attempts at least the later
reader sees the other, so two can never both pass (both may be refused, which is the safe side).
Times come from the caller's clock; the key's TTL only clears idle scopes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged, as_text, seconds_until
from router.bounds.settings import BoundsSettings


@dataclass(frozen=True)
class PaceSlot:
    """The attempt entered for a command; `release` takes it out when the command did not run."""

    key: str
    member: str


class Pacing:
    def __init__(self, settings: BoundsSettings, prefix: str) -> None:
        self.settings = settings
        self.prefix = prefix  # e.g. "{safeclaw}:router:pace:"

    def key(self, platform: str, kind: str) -> str:
        return f"{self.prefix}{platform}:{kind}"

    def take(self, conn: Counters, effect: EffectLike, now: float) -> PaceSlot | Denial | None:
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        staged = self.stage(pipe, effect, now)
        return None if staged is None else staged.take(conn, pipe)

    def stage(self, pipe: Any, effect: EffectLike, now: float) -> Staged[PaceSlot] | None:
        rule = self.settings.pace_rule(effect.platform, effect.kind, now)
        if rule is None or rule.interval <= 0:
            return None
        key = self.key(effect.platform, effect.kind)
        member = f"{now!r}:{uuid.uuid4().hex}"
        pipe.zremrangebyscore(key, "-inf", f"({now - rule.interval}")
        pipe.zadd(key, {member: now})
        pipe.zrange(key, 0, -1, withscores=True)
        pipe.expire(key, rule.interval + 3600)
        return Staged(4, lambda conn, answers: self._settle(conn, answers[2], key, member, rule.interval,
                                                            effect, now))

    def _settle(self, conn: Counters, entries: list[tuple[bytes | str, float]], key: str, member: str,
                interval: int, effect: EffectLike, now: float) -> PaceSlot | Denial:
        others = [score for name, score in entries if as_text(name) != member and score > now - interval]
        if not others:
            return PaceSlot(key, member)
        conn.zrem(key, member)
        retry_after = seconds_until(max(others) + interval, now)
        mode = " (new-account limits)" if self.settings.new_account(effect.platform, now) else ""
        return Denial(
            "paced",
            f"{effect.platform} {effect.kind} refused: {effect.platform} allows one every "
            f"{interval}s{mode}; retry in {retry_after}s",
            retry_after,
        )

    def release(self, conn: Counters, slot: PaceSlot) -> None:
        conn.zrem(slot.key, slot.member)
