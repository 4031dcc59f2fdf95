"""The autonomy channel (`--channel autonomy`): one cycle every `cycle_interval` seconds, beside
the console or Telegram, until stopped or `max_cycles` is reached (then it says so and ends)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from agent.autonomy.cycle import AutonomyCycle
from agent.channels.base import BaseChannel, MessageHandler

log = logging.getLogger("safeclaw.agent.autonomy")
RULES_POLL_SECONDS = 5.0  # between cycles, rule injections are applied this often


class AutonomyChannel(BaseChannel):
    name = "autonomy"

    def __init__(
        self,
        handle: MessageHandler,
        cycle: AutonomyCycle,
        interval: float,
        rules_poll: float = RULES_POLL_SECONDS,
    ) -> None:
        super().__init__(handle)
        self.cycle = cycle
        self.interval = interval
        self.rules_poll = rules_poll
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
            await self._rest()

    async def _rest(self) -> None:
        """Wait `interval`, applying the owner's rule injections every `rules_poll` seconds meanwhile
        (so a rule injected or accepted on the dashboard is in DOS.md within seconds, not a cycle)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + self.interval
        while not self._stopped.is_set() and (left := until - loop.time()) > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), timeout=min(left, self.rules_poll))
            if not self._stopped.is_set():
                await asyncio.to_thread(self.cycle.apply_rules)

    async def stop(self) -> None:
        self._stopped.set()

    async def send(self, conversation: str, text: str) -> None:
        log.info("autonomy has no one to send to: %s", text[:200])
