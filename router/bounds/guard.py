"""All four bounds as one check before a command runs and one record after it ended.

Order of the check: circuit (is the platform failing?), quota (any left today?), pacing (too
soon?), duplicates (said already?); the first refusal wins and gives back what the earlier ones
took. What a passing command took is held by its id until `record`:
- `ok` or `unknown` (it happened, or may have): everything stays counted;
- `error` (it did not happen): the quota unit, the pacing slot and the text are given back,
  except the pacing slot after the platform's own `rate_limited` (429): it asked us to slow down;
- any refusal after the check (a later policy check, an approval wait): everything is given back.
Bounds also apply in dry-run mode, so a rehearsal behaves as the real run would, but on counters
of their own (the policy gives a dry-run router another prefix): a rehearsal never spends or
blocks the real quotas, pacing or duplicate guard.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged
from router.bounds.circuit import CircuitBreaker, Clean
from router.bounds.duplicates import DuplicateGuard, SentEntry
from router.bounds.pacing import PaceSlot, Pacing
from router.bounds.quotas import DailyQuotas, QuotaUnit
from router.bounds.settings import BoundsSettings

MAX_HELD = 10_000  # commands between check and record; a router never has more than a few


@dataclass
class Held:
    """What one passing command took from the bounds."""

    quota: QuotaUnit | None = None
    pace: PaceSlot | None = None
    sent: SentEntry | None = None
    circuit: Clean | None = None  # the circuit was clean: a success has nothing to reset


class HardBounds:
    def __init__(self, settings: BoundsSettings, router_prefix: str, notices_key: str) -> None:
        self.settings = settings
        self.quotas = DailyQuotas(settings, f"{router_prefix}quota:")
        self.pacing = Pacing(settings, f"{router_prefix}pace:")
        self.duplicates = DuplicateGuard(settings, f"{router_prefix}sent:")
        self.circuit = CircuitBreaker(settings, f"{router_prefix}circuit:", notices_key)
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._lock = threading.Lock()  # a router runs commands in several lanes (threads) at once

    def check(self, conn: Counters, effect: EffectLike, command_id: str, now: float) -> Denial | None:
        """None when the effect is within every bound (and its share is taken); else the refusal.

        The four bounds' commands go in one round trip; each then settles its answers in the order
        above, and the first refusal wins: every share the others took is given back. A caller
        with a claim stages them into the claim's own step instead (`stage_check`, then `settle`)."""
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        staged = self.stage_check(pipe, effect, now)
        return self.settle(command_id, staged.take(conn, pipe) if staged.count else None)

    def settle(self, command_id: str, taken: Held | Denial | None) -> Denial | None:
        """What `stage_check`'s answers took: kept for the command until its `record`, or the refusal."""
        if isinstance(taken, Denial):
            return taken
        if taken is not None:
            self.keep(command_id, taken)
        return None

    def stage_check(self, pipe: Any, effect: EffectLike, now: float) -> Staged[Held]:
        """`check`'s commands queued on a caller's pipeline; settled, the shares taken (`Held`,
        not yet kept for a command: see `keep`) or the first refusal (the others given back)."""
        bounds = (("circuit", self.circuit), ("quota", self.quotas), ("pace", self.pacing),
                  ("sent", self.duplicates))
        staged = [(name, stage) for name, bound in bounds
                  if (stage := bound.stage(pipe, effect, now)) is not None]

        def settle(conn: Counters, answers: list[Any]) -> Held | Denial | None:
            held, denial, at = Held(), None, 0
            for name, stage in staged:
                taken = stage.settle(conn, answers[at : at + stage.count])
                at += stage.count
                if isinstance(taken, Denial):
                    denial = denial or taken
                else:
                    setattr(held, name, taken)
            if denial is not None:
                self._give_back(conn, held, pace=True)
                return denial
            return held

        return Staged(sum(stage.count for _, stage in staged), settle)

    def keep(self, command_id: str, held: Held) -> None:
        """Hold what a passing command took until its `record`."""
        if held.quota or held.pace or held.sent or held.circuit:
            with self._lock:
                self._held[command_id] = held
                while len(self._held) > MAX_HELD:
                    self._held.popitem(last=False)  # its share stays counted: the safe side

    def give_back(self, conn: Counters, command_id: str, held: Held) -> None:
        """Give back what a command took that will not run, unless it was kept (its `record`
        gives it back then: never twice)."""
        with self._lock:
            if self._held.get(command_id) is held:
                return
        self._give_back(conn, held, pace=True)

    def record(
        self,
        conn: Counters,
        effect: EffectLike,
        command_id: str,
        status: str,
        error: str | None,
        now: float,
        conversation: str | None = None,
    ) -> None:
        """How the command ended: keep or give back its share, and tell the circuit breaker."""
        with self._lock:
            held = self._held.pop(command_id, None)
        if held is not None and status not in ("ok", "unknown"):
            self._give_back(conn, held, pace=not (status == "error" and error == "rate_limited"))
        clean = held is not None and held.circuit is not None
        self.circuit.record(conn, effect, status, error, now, conversation, clean)

    def _give_back(self, conn: Counters, held: Held, pace: bool) -> None:
        if held.quota is not None:
            self.quotas.refund(conn, held.quota)
        if held.pace is not None and pace:
            self.pacing.release(conn, held.pace)
        if held.sent is not None:
            self.duplicates.release(conn, held.sent)

    def status(self, conn: Counters, now: float) -> dict[str, Any]:
        """The heartbeat's view: `quotas` {platform: {kind: {limit, used}}}, open `circuits`."""
        return {
            "quotas": self.quotas.usage(conn, now),
            "circuits": {p: {"open_until": t} for p, t in self.circuit.open_circuits(conn, now).items()},
            "new_account": [p for p in ("moltbook",) if self.settings.new_account(p, now)],
        }
