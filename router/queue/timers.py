"""One thread for all of a router's deadlines: a heap of due times and a condition to wait on.

Each command has two deadlines (its wait in a lane, its run within its expiry) and nearly every
one is cancelled: a `threading.Timer` each was two thread starts per command on a post's path.
Here a deadline is a heap entry; a cancelled one is dropped when it comes up. A deadline that
passes runs its action in a thread of its own, as a Timer did: an action that waits (Redis down
while it answers) never holds back the next command's deadline, whose hang-up must come on time.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("safeclaw.router.worker")


class Deadline:
    """A pending action; `cancel` keeps it from running (safe from any thread, any time)."""

    __slots__ = ("action", "args", "cancelled")

    def __init__(self, action: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.action = action
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.args = ()  # what it held (a command, its plan) is not kept until its time comes


class Timers:
    def __init__(self, name: str = "router-deadlines") -> None:
        self.name = name
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()  # ties keep their order; deadlines are never compared
        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, action: Callable[..., None], *args: Any) -> Deadline:
        """Run `action(*args)` in `seconds`, in a thread of its own, unless cancelled first."""
        deadline = Deadline(action, args)
        due = time.monotonic() + seconds
        with self._changed:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            earliest = not self._heap or due < self._heap[0][0]
            heapq.heappush(self._heap, (due, next(self._order), deadline))
            if earliest:  # else the thread wakes in time for it anyway
                self._changed.notify()
        return deadline

    def pending(self) -> int:
        """Deadlines in the heap, cancelled ones not yet dropped included (for tests)."""
        with self._changed:
            return len(self._heap)

    def _run(self) -> None:
        while True:
            with self._changed:
                deadline = self._next_due()
            thread = threading.Thread(target=self._fire, args=(deadline,), name=f"{self.name}-fired",
                                      daemon=True)
            thread.start()

    def _next_due(self) -> Deadline:
        """Wait (holding the condition) until an uncancelled deadline is due; pop and return it."""
        while True:
            if not self._heap:
                self._changed.wait()
                continue
            due, _, deadline = self._heap[0]
            if deadline.cancelled:
                heapq.heappop(self._heap)
                continue
            left = due - time.monotonic()
            if left > 0:
                self._changed.wait(left)
                continue
            heapq.heappop(self._heap)
            return deadline

    @staticmethod
    def _fire(deadline: Deadline) -> None:
        action, args = deadline.action, deadline.args  # read before `cancelled`, which is set first
        if deadline.cancelled:  # cancelled between its pop and now
            return
        try:
            action(*args)
        except BaseException:
            log.exception("a deadline's action failed")
