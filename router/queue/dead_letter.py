"""The dead-letter list: commands set aside for the router's operator, newest first.

Bounded two ways, so a poison stream cannot fill Redis: at most `max_entries` (LTRIM after each
push) and none older than `ttl` seconds (aged out from the old end on every push and every
recovery round; the whole key also expires `ttl` after the last push).
"""

from __future__ import annotations

import json
import time

import redis

from router.queue.redis_io import Batch


class DeadLetters:
    def __init__(self, key: str, max_entries: int, ttl: int) -> None:
        self.key = key
        self.max_entries = max_entries
        self.ttl = ttl

    def push(self, pipe: redis.client.Pipeline | Batch, entry: bytes) -> None:
        """Queue the push and its bounds on a pipeline (one round trip with the caller's steps)."""
        pipe.lpush(self.key, entry)
        pipe.ltrim(self.key, 0, self.max_entries - 1)
        pipe.expire(self.key, self.ttl)

    def age_out(self, conn: redis.Redis, now: float | None = None, batch: int = 100) -> int:
        """Drop entries older than the TTL from the old end; returns how many went."""
        cutoff = (time.time() if now is None else now) - self.ttl
        dropped = 0
        while dropped < batch:
            oldest = conn.lindex(self.key, -1)
            if oldest is None or entry_time(oldest) >= cutoff:
                break
            conn.lrem(self.key, -1, oldest)  # type: ignore[arg-type]  # that exact entry (bytes)
            dropped += 1
        return dropped

    def size(self, conn: redis.Redis) -> int:
        return int(conn.llen(self.key))


def entry_time(raw: bytes | str) -> float:
    """An entry's timestamp; an unreadable entry counts as infinitely old."""
    try:
        value = json.loads(raw).get("ts")
        return float(value) if isinstance(value, int | float) else 0.0
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return 0.0
