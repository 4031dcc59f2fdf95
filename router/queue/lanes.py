"""Lanes: commands run concurrently, one bounded pool of threads per platform.

A platform that hangs fills its own lane only: every other platform, and the router's own
reads (PING), go on. A lane holds at most `per_lane` running commands and `backlog` waiting
ones; past that `submit` says no and the caller answers the command `busy` (not run).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("safeclaw.router.lanes")


class Lanes:
    def __init__(self, per_lane: int, backlog: int) -> None:
        self.per_lane = per_lane
        self.backlog = backlog
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._pending: Counter[str] = Counter()
        self._lock = threading.Lock()

    def submit(self, lane: str, task: Callable[[], None]) -> bool:
        """Run `task` in the lane's pool; False (nothing queued) when the lane is full."""
        with self._lock:
            if self._pending[lane] >= self.per_lane + self.backlog:
                return False
            self._pending[lane] += 1
            pool = self._pools.get(lane)
            if pool is None:
                pool = ThreadPoolExecutor(self.per_lane, thread_name_prefix=f"lane-{lane}")
                self._pools[lane] = pool

        def run() -> None:
            try:
                task()
            except Exception:  # the task contains its own failures; this is the last guard
                log.exception("a command in lane %s failed outside its handler", lane)
            finally:
                with self._lock:
                    self._pending[lane] -= 1

        pool.submit(run)
        return True

    def pending(self, lane: str) -> int:
        with self._lock:
            return self._pending[lane]

    def shutdown(self) -> None:
        """Wait for every command in hand and in the lanes' queues to finish."""
        with self._lock:
            pools = list(self._pools.values())
        for pool in pools:
            pool.shutdown(wait=True)


class Once:
    """The first `claim()` wins: the run's own answer or the deadline's, never both."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claimed = False

    def claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True


class InFlight:
    """Queue items this router is handling now (a multiset: the same bytes may come twice), so a
    periodic recovery of its own processing list never runs one a second time."""

    def __init__(self) -> None:
        self._items: Counter[bytes] = Counter()
        self._lock = threading.Lock()

    def add(self, raw: bytes) -> None:
        with self._lock:
            self._items[raw] += 1

    def remove(self, raw: bytes) -> None:
        with self._lock:
            self._items[raw] -= 1
            if self._items[raw] <= 0:
                del self._items[raw]

    def count(self, raw: bytes) -> int:
        with self._lock:
            return self._items[raw]
