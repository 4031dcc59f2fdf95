"""workspace/logs/cost.jsonl: one line per LLM call, appended; totals read back incrementally.

Several agent processes may share the file (a chat service and `autonomy once` from cron): each
appends whole lines with one O_APPEND write and reads what the others appended since it last
looked, so every process sees the same totals.

A line the disk refuses (full, read-only) is kept in memory and counted all the same; the budget
guard sends no further call until it is written (`flush`). A call is never billed unseen.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.cost.shares import OutsideSpend

log = logging.getLogger("safeclaw.agent.cost")
MIN_FREE_BYTES = 64 * 1024  # below this at start, the ledger is taken as full


def utc_day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


@dataclass
class DayTotals:
    usd: float = 0.0
    calls: int = 0
    tokens: int = 0
    outside: OutsideSpend = field(default_factory=OutsideSpend)  # what outside payers spent


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
    # Whose words it was spent on (agent.cost.shares): "" and False for the owner.
    payer: str = ""
    channel: str = ""
    outside: bool = False
    authors: tuple[str, ...] = ()  # the other outside authors charged the whole call (autonomy's items)

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
        if self.outside:
            data |= {"outside": True, "payer": self.payer, "channel": self.channel}
            if self.authors:
                data["authors"] = list(self.authors)
        return json.dumps(data, ensure_ascii=False)


@dataclass
class CostLedger:
    path: Path
    clock: Callable[[], float] = time.time
    total_usd: float = 0.0
    days: dict[str, DayTotals] = field(default_factory=dict)
    unwritten: list[CostEntry] = field(default_factory=list)  # counted, not yet on the disk
    write_error: str = ""  # why the last write failed ("" when the disk took everything)
    _offset: int = 0
    _torn: bool = False  # a write stopped inside a line: the next line starts on a new one
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, entry: CostEntry) -> None:
        """Count the call: on the disk if it takes the line, else in memory until `flush` can."""
        with self._lock:
            self.unwritten.append(entry)
        self.flush()
        self.refresh()

    def flush(self) -> bool:
        """Write the lines kept in memory; True when none is left."""
        with self._lock:
            while self.unwritten:
                try:
                    self._append(self.unwritten[0])
                except OSError as exc:
                    reason = os.strerror(exc.errno) if exc.errno else str(exc)
                    if reason != self.write_error:
                        log.error("cannot write %s (%s); LLM costs are counted in memory and no "
                                  "further call is sent until they are written", self.path, reason)
                    self.write_error = reason
                    return False
                self.unwritten.pop(0)
            if self.write_error:
                log.info("%s is writable again; the costs kept in memory are written", self.path)
            self.write_error = ""
            return True

    def _append(self, entry: CostEntry) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = ((b"\n" if self._torn else b"") + (entry.to_json() + "\n").encode("utf-8"))
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = 0
            while written < len(line):
                count = os.write(fd, line[written:])
                if count <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                written += count
                self._torn = written < len(line)
            os.fsync(fd)
        except OSError:
            self._torn = self._torn or 0 < written < len(line)
            raise
        finally:
            os.close(fd)
        self._torn = False

    def check_writable(self) -> str | None:
        """Why the ledger cannot be written now (a start-up check), or None."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fsync(fd)
                free = os.statvfs(self.path.parent)
            finally:
                os.close(fd)
        except OSError as exc:
            return os.strerror(exc.errno) if exc.errno else str(exc)
        if free.f_bavail * free.f_frsize < MIN_FREE_BYTES:
            return "No space left on device"
        return None

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
        if data.get("outside") is True:
            authors = data.get("authors")
            named = [str(a) for a in authors] if isinstance(authors, list) else []
            day.outside.add(str(data.get("channel", "")), str(data.get("payer", "")), usd, named)

    def today(self) -> DayTotals:
        self.refresh()
        day = utc_day(self.clock())
        on_disk = self.days.get(day, DayTotals())
        kept = [e for e in list(self.unwritten) if utc_day(e.ts) == day]
        outside = on_disk.outside.copy()
        for entry in kept:
            if entry.outside:
                outside.add(entry.channel, entry.payer, entry.usd, entry.authors)
        return DayTotals(on_disk.usd + sum(e.usd for e in kept), on_disk.calls + len(kept),
                         on_disk.tokens + sum(e.input_tokens + e.output_tokens for e in kept), outside)

    def total(self) -> float:
        self.refresh()
        return self.total_usd + sum(e.usd for e in list(self.unwritten))
