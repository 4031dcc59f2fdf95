"""The run of a channel that listens until stopped (Telegram, Bluesky): `stop()` asks the run to
end and returns once it has wound down, and a wait inside the run (a backoff between
connections) ends as soon as a stop is asked."""

from __future__ import annotations

import asyncio
import contextlib


class ChannelRun:
    def __init__(self) -> None:
        self.stop_requested = asyncio.Event()
        self._finished = asyncio.Event()
        self.running = False

    def begin(self) -> None:
        self.running = True

    def end(self) -> None:
        self.running = False
        self._finished.set()

    async def stop(self) -> None:
        self.stop_requested.set()
        if self.running:
            await self._finished.wait()

    async def pause(self, seconds: float) -> None:
        """Wait `seconds`, or less when a stop is asked meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_requested.wait(), seconds)
