"""Lanes: commands run concurrently, one bounded pool of threads per platform.

A platform that hangs fills its own lane only: every other platform, and the router's own
reads (PING), go on. A lane holds at most `per_lane` running commands and `backlog` waiting
ones; past that `submit` says no and the caller answers the command `busy` (not run).

Shutdown is bounded: commands still waiting are dropped (each `on_drop` called: they stay in the
router's processing list, and the next start's recovery takes them up), the running ones get
`grace` seconds, and the lanes' threads are daemons, so a platform that never finishes its answer
cannot keep a stopping router alive.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable

log = logging.getLogger("safeclaw.router.lanes")
Task = Callable[[], None]


class Lanes:
    def __init__(self, per_lane: int, backlog: int) -> None:
        self.per_lane = per_lane
        self.backlog = backlog
        self._waiting: dict[str, deque[tuple[Task, Task | None]]] = {}
        self._threads: Counter[str] = Counter()  # threads alive per lane
        self._idle: Counter[str] = Counter()  # of those, waiting for a task
        self._pending: Counter[str] = Counter()  # running + waiting
        self._running = 0
        self._closed = False
        self._lock = threading.Lock()
        # One condition per lane for its idle threads (a command wakes one thread of its own lane,
        # not every idle thread of every platform), one for a shutdown waiting for running ones.
        self._ready: dict[str, threading.Condition] = {}
        self._finished = threading.Condition(self._lock)

    def submit(self, lane: str, task: Task, on_drop: Task | None = None) -> bool:
        """Run `task` in the lane; False (nothing queued) when the lane is full or closed.
        `on_drop`: called instead when the task is dropped unstarted at shutdown."""
        with self._lock:
            if self._closed or self._pending[lane] >= self.per_lane + self.backlog:
                return False
            self._pending[lane] += 1
            self._waiting.setdefault(lane, deque()).append((task, on_drop))
            ready = self._ready.setdefault(lane, threading.Condition(self._lock))
            if self._idle[lane]:
                ready.notify()
            elif self._threads[lane] < self.per_lane:
                self._threads[lane] += 1
                threading.Thread(target=self._serve, args=(lane,), name=f"lane-{lane}", daemon=True).start()
        return True

    def _serve(self, lane: str) -> None:
        with self._lock:
            self._idle[lane] += 1
            ready = self._ready[lane]
        while True:
            with self._lock:
                while not self._waiting[lane] and not self._closed:
                    ready.wait()
                if self._closed or not self._waiting[lane]:
                    self._idle[lane] -= 1
                    self._threads[lane] -= 1
                    return
                task, _drop = self._waiting[lane].popleft()
                self._idle[lane] -= 1
                self._running += 1
            try:
                task()
            except BaseException:  # the task contains its own failures; this is the last guard
                log.exception("a command in lane %s failed outside its handler", lane)
            finally:
                with self._lock:
                    self._running -= 1
                    self._pending[lane] -= 1
                    self._idle[lane] += 1  # free again: the next command of this lane comes here
                    self._finished.notify_all()  # a shutdown may be waiting

    def pending(self, lane: str) -> int:
        with self._lock:
            return self._pending[lane]

    def shutdown(self, grace: float) -> int:
        """Drop the waiting commands (their `on_drop` called), give the running ones up to `grace`
        seconds, and return how many are still running then (left to their daemon threads)."""
        with self._lock:
            self._closed = True
            dropped = [(lane, item) for lane, queue in self._waiting.items() for item in queue]
            for queue in self._waiting.values():
                queue.clear()
            for lane, _item in dropped:
                self._pending[lane] -= 1
            for ready in self._ready.values():
                ready.notify_all()
        for lane, (_task, on_drop) in dropped:
            if on_drop is not None:
                try:
                    on_drop()
                except Exception:
                    log.exception("dropping a waiting command of lane %s failed", lane)
        deadline = time.monotonic() + grace
        with self._lock:
            while self._running and (left := deadline - time.monotonic()) > 0:
                self._finished.wait(left)
            return self._running


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
