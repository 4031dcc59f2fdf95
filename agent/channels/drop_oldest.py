"""A bounded queue that never blocks its writer: when full, the oldest item makes room.

For a reader that must keep up with a stream it does not control (Jetstream): a burst costs
the oldest waiting items, never the reader's time, and the newest items win.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class DropOldestQueue(Generic[T]):
    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._items: deque[T] = deque()
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T) -> T | None:
        """Add `item` at once; returns the oldest item dropped to make room, if one was."""
        dropped = self._items.popleft() if len(self._items) >= self.maxsize else None
        self._items.append(item)
        self._ready.set()
        return dropped

    async def get(self) -> T:
        """The oldest item, waiting for one if the queue is empty."""
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        return self._items.popleft()
