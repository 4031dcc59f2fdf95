"""The autonomy channel (`--channel autonomy`): one cycle every `cycle_interval` seconds, beside
the console or Telegram, until stopped or `max_cycles` is reached (then it says so and ends)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from agent.autonomy.cycle import AutonomyCycle
from agent.channels.base import BaseChannel, MessageHandler

log = logging.getLogger("safeclaw.agent.autonomy")


class AutonomyChannel(BaseChannel):
    name = "autonomy"

    def __init__(self, handle: MessageHandler, cycle: AutonomyCycle, interval: float) -> None:
        super().__init__(handle)
        self.cycle = cycle
        self.interval = interval
        self._stopped = asyncio.Event()

    async def start(self) -> None:
        while not self._stopped.is_set():
            try:
                report = await asyncio.to_thread(self.cycle.run_once)
            except Exception:  # one bad cycle must not end autonomy; the heartbeat shows if it persists
                log.exception("autonomy cycle failed")
            else:
                log.info("autonomy cycle %d: %s", report.cycle, report.outcome)
                if report.outcome == "stopped:max_cycles":
                    log.warning("autonomy stopped: %s", report.detail)
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), timeout=self.interval)

    async def stop(self) -> None:
        self._stopped.set()

    async def send(self, conversation: str, text: str) -> None:
        log.info("autonomy has no one to send to: %s", text[:200])
