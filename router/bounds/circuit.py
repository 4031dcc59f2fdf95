"""The circuit breaker: after N failed writes in a row on a platform, its writes stop for a while.

What counts, per platform, for writes only (a read that works says nothing about posting):
- `ok` closes the circuit and resets the count;
- `unknown` is a failure: the platform did not confirm, and a platform that keeps not confirming
  is what the breaker is for (quotas and the duplicate guard count the same command as sent: each
  bound takes the safe side);
- `error` is a failure when the platform or the request failed (request_failed, rate_limited,
  auth_failed, internal_error); an error about the command itself (not_found, invalid_params,
  not_supported, no_credentials, ...) neither counts nor resets;
- refusals (denied, pending_approval, expired) never ran and are not counted;
- an `unknown` the router caused itself says nothing about the platform and is not counted: the
  router stopped while it ran (`interrupted`), or it is a repeat
  of a command still running (`repeat_in_progress`), or its deadline passed while it had spent
  longer in the router's own queue than at the platform (`queue_deadline`); one whose deadline
  passed before it left the queue is `expired` (never run).

When the count reaches N the circuit opens for `circuit_open_seconds`, and the router that opened
it (SET ... GET tells exactly one) pushes a notice for the owner. After that time writes are let
through again; the first one that fails reopens the circuit at once (the count is still at N),
the first that succeeds closes it and pushes a `circuit_closed` notice. A success whose check saw
the circuit closed and no failure counted has nothing to reset and writes nothing; a failure
another router counted while it ran stays counted (they ran at once: the safe side).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged, seconds_until
from router.bounds.settings import BOUNDED_KINDS, PLATFORMS, BoundsSettings

log = logging.getLogger("safeclaw.router.bounds.circuit")
PLATFORM_FAILURES = frozenset({"request_failed", "rate_limited", "auth_failed", "internal_error"})
ROUTER_SIDE_UNKNOWNS = frozenset({"interrupted", "repeat_in_progress", "queue_deadline"})
MAX_NOTICES = 1000  # the notices list is trimmed to this many (newest kept)


@dataclass(frozen=True)
class Clean:
    """What a passing check saw: the circuit closed and no failure counted."""


CLEAN = Clean()


def outcome_of(status: str, error: str | None) -> str:
    """ "success", "failure" or "neutral", for the breaker, from a reply's status and error."""
    if status == "ok":
        return "success"
    if status == "unknown" and error in ROUTER_SIDE_UNKNOWNS:
        return "neutral"
    if status == "unknown" or (status == "error" and error in PLATFORM_FAILURES):
        return "failure"
    return "neutral"


class CircuitBreaker:
    def __init__(self, settings: BoundsSettings, prefix: str, notices_key: str) -> None:
        self.settings = settings
        self.prefix = prefix  # e.g. "{safeclaw}:router:circuit:"
        self.notices_key = notices_key

    def failures_key(self, platform: str) -> str:
        return f"{self.prefix}{platform}:failures"

    def open_key(self, platform: str) -> str:
        return f"{self.prefix}{platform}:open_until"

    def check(self, conn: Counters, effect: EffectLike, now: float) -> Denial | None:
        pipe = conn.pipeline(transaction=False)
        staged = self.stage(pipe, effect, now)
        found = None if staged is None else staged.take(conn, pipe)
        return found if isinstance(found, Denial) else None

    def stage(self, pipe: Any, effect: EffectLike, now: float) -> Staged[Clean] | None:
        if effect.kind not in BOUNDED_KINDS:
            return None
        pipe.get(self.open_key(effect.platform))
        pipe.get(self.failures_key(effect.platform))
        return Staged(2, lambda _conn, answers: self._settle(answers[0], answers[1], effect, now))

    def _settle(self, raw: Any, failures: Any, effect: EffectLike, now: float) -> Clean | Denial | None:
        if raw is None:
            return CLEAN if failures is None else None
        if float(raw) <= now:
            return None
        retry_after = seconds_until(float(raw), now)
        return Denial(
            "circuit_open",
            f"{effect.platform} {effect.kind} refused: {effect.platform}'s circuit is open after "
            f"{self.settings.circuit_failures} failed writes in a row; writes resume in {retry_after}s",
            retry_after,
        )

    def record(
        self,
        conn: Counters,
        effect: EffectLike,
        status: str,
        error: str | None,
        now: float,
        conversation: str | None = None,
        clean: bool = False,
    ) -> None:
        """Count one write's outcome; `conversation` (whose command it was) gets the notice too.
        `clean`: the circuit was closed with no failure counted when the command was checked, so a
        success has nothing to reset (a failure counted since ran beside it: it counts)."""
        if effect.kind not in BOUNDED_KINDS:
            return
        outcome = outcome_of(status, error)
        if outcome == "success" and not clean:
            pipe = conn.pipeline(transaction=False)
            pipe.delete(self.failures_key(effect.platform))
            pipe.getdel(self.open_key(effect.platform))
            if pipe.execute()[1] is not None:
                self._notify(
                    conn,
                    "circuit_closed",
                    effect.platform,
                    now,
                    f"{effect.platform}: a write succeeded again; its circuit is closed",
                    conversation=conversation,
                )
        elif outcome == "failure":
            self._failed(conn, effect.platform, now, conversation)

    def _failed(self, conn: Counters, platform: str, now: float, conversation: str | None) -> None:
        pipe = conn.pipeline(transaction=False)
        pipe.incr(self.failures_key(platform))
        pipe.expire(self.failures_key(platform), 7 * 24 * 3600)
        pipe.get(self.open_key(platform))
        failures, _, open_until = pipe.execute()
        if int(failures) < self.settings.circuit_failures:
            return
        if open_until is not None and float(open_until) > now:
            return  # already open: a command that was in flight when it opened
        until = now + self.settings.circuit_open_seconds
        previous = conn.set(
            self.open_key(platform), repr(until), get=True, ex=self.settings.circuit_open_seconds + 24 * 3600
        )
        if previous is not None and float(previous) > now:
            return  # another router opened it a moment ago and told the owner
        log.warning(
            "%s: %d failed writes in a row; circuit open for %ds",
            platform,
            int(failures),
            self.settings.circuit_open_seconds,
        )
        self._notify(
            conn,
            "circuit_open",
            platform,
            now,
            f"{platform}: {int(failures)} failed writes in a row; SafeClaw stopped writing there "
            f"for {self.settings.circuit_open_seconds // 60} min (circuit breaker)",
            until=until,
            conversation=conversation,
        )

    def _notify(
        self,
        conn: Counters,
        kind: str,
        platform: str,
        now: float,
        message: str,
        until: float | None = None,
        conversation: str | None = None,
    ) -> None:
        """The same shape as `router.policy.owner_notices.push`: {type, ts, ...}; the agent delivers it."""
        notice: dict[str, object] = {"type": kind, "ts": now, "platform": platform, "message": message}
        if until is not None:
            notice["until"] = until
        if conversation is not None:
            notice["conversation"] = conversation
        pipe = conn.pipeline(transaction=False)
        pipe.lpush(self.notices_key, json.dumps(notice))
        pipe.ltrim(self.notices_key, 0, MAX_NOTICES - 1)
        pipe.execute()

    def open_circuits(self, conn: Counters, now: float) -> dict[str, float]:
        """`{platform: open_until}` for the circuits open now, for the heartbeat."""
        pipe = conn.pipeline(transaction=False)
        for platform in PLATFORMS:
            pipe.get(self.open_key(platform))
        found: dict[str, float] = {}
        for platform, raw in zip(PLATFORMS, pipe.execute(), strict=True):
            if raw is not None and float(raw) > now:
                found[platform] = float(raw)
        return found
