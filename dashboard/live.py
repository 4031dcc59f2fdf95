"""The live stream's one poller, shared by every open page.

While at least one page listens, one task looks once a TICK: new audit lines (one round trip),
the state band (one) and the approvals when their ids changed. What changed is sent to every
listener's queue; a page waits on its queue, so an idle page costs nothing, and ten cost what one
does. With nobody listening the task stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from anyio import to_thread

log = logging.getLogger("safeclaw.dashboard")
TICK_SECONDS = 1.0
QUEUE_LIMIT = 100  # events a slow page may fall behind by before it is dropped (it reconnects)


def event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


class LiveHub:
    def __init__(self, look: Callable[[dict[str, str]], list[str]]) -> None:
        """`look(last_sent)` returns the events to send now; it keeps `last_sent` current."""
        self.look = look
        self.listeners: set[asyncio.Queue[str | None]] = set()
        self.last_sent: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    def subscribe(self) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_LIMIT)
        self.listeners.add(queue)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
        self.listeners.discard(queue)

    async def _run(self) -> None:
        try:
            while self.listeners:
                try:
                    found = await to_thread.run_sync(self.look, self.last_sent)
                except Exception:  # the next tick tries again; the pages stay connected
                    log.exception("the live stream could not look for changes")
                    found = []
                for text in found:
                    self.send(text)
                await asyncio.sleep(TICK_SECONDS)
        finally:
            self.last_sent.clear()  # a new first listener gets the whole state again

    def send(self, text: str) -> None:
        for queue in list(self.listeners):
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                self.listeners.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)  # tells that page's stream to end
