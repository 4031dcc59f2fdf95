"""The dashboard's own copy of the routers' audit stream, kept current in one round trip.

Each `sync` asks Redis for the lines after the newest one held (XRANGE from there, with the
stream's newest id in the same pipeline to notice a stream that was emptied). Lines are described
once, as they arrive, and counted per hour and platform for the charts. Filters, paging and search
then run over this copy: whatever the number of lines, a request costs one round trip. The copy
holds the newest MAX_ITEMS lines; the routers' files hold the rest (`audit_files`).
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from typing import Any

import redis

from dashboard.activity import describe, matches, superseded
from dashboard.values import json_object
from protocol.keys import Keys

MAX_ITEMS = 12_000  # a little over the stream's cap (router AUDIT_STREAM_MAX)
BATCH = 2_000
HOUR = 3600
KEEP_HOURS = 24 * 8


def _id_key(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return 0, 0


class AuditMirror:
    def __init__(self, conn: redis.Redis, keys: Keys) -> None:
        self.conn = conn
        self.keys = keys
        self.items: deque[tuple[str, dict[str, Any]]] = deque(maxlen=MAX_ITEMS)
        self.last_id = "0-0"
        self.hourly: Counter[tuple[int, str]] = Counter()  # (hour start, platform) -> actions done
        self.finished: dict[str, None] = {}  # command ids with an outcome line (insertion ordered)
        self._lock = threading.Lock()

    def sync(self) -> list[dict[str, Any]]:
        """Take in the lines written since the last call; returns the new items, oldest first."""
        with self._lock:
            added: list[dict[str, Any]] = []
            while True:
                pipe = self.conn.pipeline(transaction=False)
                pipe.xrange(self.keys.audit_stream, min=f"({self.last_id}", max="+", count=BATCH)
                pipe.xrevrange(self.keys.audit_stream, count=1)
                entries, newest = pipe.execute()
                if not entries and newest and _id_key(str(newest[0][0])) < _id_key(self.last_id):
                    self._reset()  # the stream was deleted and began again: start over
                    continue
                for entry_id, fields in entries:
                    self.last_id = str(entry_id)
                    record = json_object(fields.get("line"))
                    if record is not None:
                        item = describe(record)
                        self.items.append((self.last_id, item))
                        self._count(item)
                        self._finish(item)
                        added.append(item)
                if len(entries) < BATCH:
                    return added

    def _finish(self, item: dict[str, Any]) -> None:
        if item["outcome"] != "started" and item["command_id"]:
            self.finished[item["command_id"]] = None
            while len(self.finished) > MAX_ITEMS:
                del self.finished[next(iter(self.finished))]

    def _reset(self) -> None:
        self.items.clear()
        self.hourly.clear()
        self.finished.clear()
        self.last_id = "0-0"

    def _count(self, item: dict[str, Any]) -> None:
        if item["outcome"] != "done" or item["ts"] is None or item["kind"] in ("read", "") or item["dry_run"]:
            return
        hour = int(item["ts"]) // HOUR * HOUR
        self.hourly[(hour, item["platform"] or "?")] += 1
        if len(self.hourly) > KEEP_HOURS * 8:
            oldest = max(h for h, _ in self.hourly) - KEEP_HOURS * HOUR
            for key in [k for k in self.hourly if k[0] < oldest]:
                del self.hourly[key]

    def page(
        self, wanted: dict[str, str], words: list[str], before: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None, bool]:
        """Up to `limit` matching items older than stream id `before`, newest first; the cursor
        for the next page (None when this copy has no older match) and whether the copy ran out."""
        with self._lock:
            found: list[dict[str, Any]] = []
            cursor = None
            start = _id_key(before) if before else None
            for entry_id, item in reversed(self.items):
                if start is not None and _id_key(entry_id) >= start:
                    continue
                if not superseded(item, self.finished, wanted) and matches(item, wanted, words):
                    if len(found) == limit:
                        return found, cursor, False
                    found.append({**item, "id": entry_id})
                    cursor = entry_id
            return found, None, True

    def after(self, stream_id: str | None) -> tuple[str, list[dict[str, Any]]]:
        """The items after `stream_id`, oldest first, and the newest id held (None: only that id,
        so a new listener starts from now)."""
        with self._lock:
            newest = self.items[-1][0] if self.items else self.last_id
            if stream_id is None:
                return newest, []
            start = _id_key(stream_id)
            found = []
            for entry_id, item in reversed(self.items):
                if _id_key(entry_id) <= start:
                    break
                found.append({**item, "id": entry_id})
            return newest, found[::-1]

    def oldest_ts(self) -> float | None:
        with self._lock:
            return self.items[0][1]["ts"] if self.items else None

    def hourly_counts(self) -> dict[tuple[int, str], int]:
        with self._lock:
            return dict(self.hourly)

    def platforms(self) -> list[str]:
        with self._lock:
            return sorted({item["platform"] for _, item in self.items if item["platform"]})
