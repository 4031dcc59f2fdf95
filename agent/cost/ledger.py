"""workspace/logs/cost.jsonl: one line per LLM call, appended; totals read back incrementally.

Several agent processes may share the file (a chat service and `autonomy once` from cron): each
appends whole lines with one O_APPEND write and reads what the others appended since it last
looked, so every process sees the same totals.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("safeclaw.agent.cost")


def utc_day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


@dataclass
class DayTotals:
    usd: float = 0.0
    calls: int = 0
    tokens: int = 0


@dataclass(frozen=True)
class CostEntry:
    ts: float
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    usd: float
    price_source: str  # default | owner | local | assumed
    estimated: bool = False  # the provider reported no usage; the counts are guessed from the text
    label: str = ""  # which conversation (or the autonomy scorer) made the call

    def to_json(self) -> str:
        data = {
            "ts": round(self.ts, 3),
            "day": utc_day(self.ts),
            "provider": self.provider,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": round(self.usd, 8),
            "price_source": self.price_source,
            "estimated": self.estimated,
            "label": self.label,
        }
        return json.dumps(data, ensure_ascii=False)


@dataclass
class CostLedger:
    path: Path
    clock: Callable[[], float] = time.time
    total_usd: float = 0.0
    days: dict[str, DayTotals] = field(default_factory=dict)
    _offset: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, entry: CostEntry) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (entry.to_json() + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.refresh()

    def refresh(self) -> None:
        """Add the lines appended since the last read (by this process or another)."""
        with self._lock:
            try:
                with self.path.open("rb") as handle:
                    handle.seek(self._offset)
                    chunk = handle.read()
            except FileNotFoundError:
                return
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits
            self._offset += len(complete)
            for raw in complete.splitlines():
                self._add(raw)

    def _add(self, raw: bytes) -> None:
        try:
            data: Any = json.loads(raw)
            usd, ts = float(data["usd"]), float(data["ts"])
            tokens = int(data.get("input_tokens", 0)) + int(data.get("output_tokens", 0))
        except (ValueError, TypeError, KeyError):
            log.warning("%s: skipped a line that is not a cost record", self.path)
            return
        if usd < 0 or usd != usd:  # a negative or NaN line must not buy budget back
            log.warning("%s: skipped a record with an impossible cost %r", self.path, data.get("usd"))
            return
        self.total_usd += usd
        day = self.days.setdefault(utc_day(ts), DayTotals())
        day.usd += usd
        day.calls += 1
        day.tokens += tokens

    def today(self) -> DayTotals:
        self.refresh()
        return self.days.get(utc_day(self.clock()), DayTotals())

    def total(self) -> float:
        self.refresh()
        return self.total_usd
