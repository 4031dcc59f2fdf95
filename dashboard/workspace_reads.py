"""What the dashboard reads from the agent's workspace (read only; the agent writes these files, so
every value is checked): the LLM cost per day from logs/cost.jsonl, read incrementally, and
autonomy's state, pause and last cycles (autonomy/state.json, logs/activity.jsonl)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

from dashboard.values import json_object, number, text, whole

TAIL_BYTES = 64 * 1024
MAX_CYCLES = 10
KEEP_DAYS = 60
OUTCOME_WORDS = {
    "acted": "acted",
    "rested": "rested: nothing worth doing",
    "stopped:max_cycles": "stopped: it reached max_cycles",
}
PAUSE_WORDS = {
    "budget": "the LLM budget is spent",
    "kill_switch": "the kill switch is on",
    "circuit_open": "a platform is paused after failures",
    "quota_exceeded": "today's quota is used up",
    "paced": "pacing: too soon after the last action",
    "max_cycles": "it reached max_cycles",
}


class CostHistory:
    """Dollars per UTC day from cost.jsonl; each call reads only what was appended since the last
    (a file replaced or cut short is read again from the start)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.days: dict[str, float] = {}
        self._offset = 0
        self._inode: int | None = None
        self._lock = threading.Lock()

    def per_day(self) -> dict[str, float]:
        with self._lock:
            with contextlib.suppress(OSError):  # no ledger yet: what was read so far stands
                self._read_new()
            return dict(self.days)

    def _read_new(self) -> None:
        info = os.stat(self.path)
        if info.st_ino != self._inode or info.st_size < self._offset:
            self.days, self._offset, self._inode = {}, 0, info.st_ino
        if info.st_size == self._offset:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            chunk = handle.read(info.st_size - self._offset)
        whole_part = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits
        self._offset += len(whole_part)
        for line in whole_part.splitlines():
            entry = json_object(line)
            if entry is None:
                continue
            usd, ts = number(entry.get("usd")), number(entry.get("ts"))
            if usd is None or ts is None or not 0 <= usd < 1e6:
                continue
            day = time.strftime("%Y-%m-%d", time.gmtime(ts))
            self.days[day] = self.days.get(day, 0.0) + usd
        if len(self.days) > KEEP_DAYS:
            for day in sorted(self.days)[:-KEEP_DAYS]:
                del self.days[day]


def last_lines(path: Path, count: int) -> list[dict[str, Any]]:
    """The last `count` JSON objects of a JSON-lines file, reading only its tail."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return []
    lines = tail.splitlines()[1:] if size > TAIL_BYTES else tail.splitlines()
    found = [entry for line in lines if (entry := json_object(line)) is not None]
    return found[-count:]


def cycle_words(entry: dict[str, Any]) -> dict[str, Any]:
    outcome = text(entry.get("outcome"), 60)
    words = OUTCOME_WORDS.get(outcome, "")
    if outcome.startswith("paused:"):
        reason = outcome.removeprefix("paused:")
        words = "paused: " + PAUSE_WORDS.get(reason, reason.replace("_", " "))
    public: list[Any] = entry["public"] if isinstance(entry.get("public"), list) else []
    refused: list[Any] = entry["refused"] if isinstance(entry.get("refused"), list) else []
    usd = number(entry.get("usd"))
    details = [
        f"{whole(entry.get('new_items')) or 0} new item(s) read",
        f"{len(public)} public action(s)",
    ]
    if refused:
        details.append(f"{len(refused)} refused")
    if usd:
        details.append(f"${usd:.4f}")
    return {
        "cycle": whole(entry.get("cycle")),
        "ts": number(entry.get("ts")),
        "outcome": outcome,
        "words": words or outcome.replace("_", " ") or "unknown",
        "details": ", ".join(details),
        "detail": text(entry.get("detail"), 300),
    }


def autonomy_panel(workspace: Path, config: Path | None, now: float) -> dict[str, Any]:
    """Enabled or not, the last cycle and its outcome, the next one, the pause, the last cycles."""
    settings = _autonomy_settings(config)
    state = json_object(_read(workspace / "autonomy" / "state.json")) or {}
    pause = state.get("pause") if isinstance(state.get("pause"), dict) else None
    cycles = [cycle_words(e) for e in last_lines(workspace / "logs" / "activity.jsonl", MAX_CYCLES)]
    last_at = number(state.get("last_cycle_at")) or (cycles[-1]["ts"] if cycles else None)
    interval = settings.get("cycle_interval")
    paused = None
    if pause is not None:
        reason = text(pause.get("reason"), 60)
        paused = {
            "reason": reason,
            "words": PAUSE_WORDS.get(reason, reason.replace("_", " ")),
            "since": number(pause.get("since")),
            "until": number(pause.get("until")),
            "detail": text(pause.get("detail"), 300),
        }
    next_at = last_at + interval if last_at is not None and interval else None
    if paused and paused["until"]:
        next_at = max(next_at or 0.0, paused["until"])
    return {
        "enabled": settings.get("enabled"),
        "cycle_interval": interval,
        "cycle_count": whole(state.get("cycle_count")),
        "last_cycle_at": last_at,
        "last": cycles[-1] if cycles else None,
        "next_at": next_at if settings.get("enabled") else None,
        "paused": paused,
        "cycles": list(reversed(cycles)),
        "ts": now,
    }


def _autonomy_settings(config: Path | None) -> dict[str, Any]:
    data = json_object(_read(config)) if config is not None else None
    channels: dict[str, Any] = data["channels"] if data and isinstance(data.get("channels"), dict) else {}
    section: dict[str, Any] | None = (
        channels["autonomy"] if isinstance(channels.get("autonomy"), dict) else None
    )
    if section is None:
        return {"enabled": None if data is None else False, "cycle_interval": None}
    enabled = section.get("enabled")
    interval = number(section.get("cycle_interval"))
    return {
        "enabled": enabled if isinstance(enabled, bool) else None,
        "cycle_interval": interval if interval and interval > 0 else 1800.0,
    }


def _read(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:1_000_000]
    except OSError:
        return None
