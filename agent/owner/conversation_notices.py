"""Messages of the agent's own in a conversation (a late router outcome): kept, then sent.

Each is recorded in the conversation's history first, then sent on the conversation's channel;
a channel that is not running yet (Telegram still starting at start-up) is tried again a few
times in the background.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.channels.base import BaseChannel
from agent.errors import AgentError

if TYPE_CHECKING:
    from agent.mind.loop import AgentLoop

log = logging.getLogger("safeclaw.agent")
NOTICE_TRIES = 10
NOTICE_RETRY_SECONDS = 3.0


class OwnerNotices:
    def __init__(self, loop: AgentLoop, channels: Callable[[], list[BaseChannel]]) -> None:
        self.loop = loop
        self.channels = channels
        self._retries: set[asyncio.Task[None]] = set()

    async def tell(self, conversation: str, text: str) -> None:
        try:
            await asyncio.to_thread(self.loop.add_notice, conversation, text)
        except AgentError as exc:
            log.error("could not record a notice for %s: %s", conversation, exc)
        await self.send(conversation, text)

    async def send(self, conversation: str, text: str, tries_left: int = NOTICE_TRIES) -> None:
        channel = next((c for c in self.channels() if c.name == conversation.split(":", 1)[0]), None)
        if channel is None:
            log.warning("no running channel for %s; the notice is in its history: %s", conversation, text)
            return
        try:
            await channel.send(conversation, text)
        except Exception as exc:
            if tries_left <= 1:
                log.warning("could not send a notice to %s (%s); it is in its history", conversation, exc)
                return
            retry = asyncio.create_task(self._send_later(conversation, text, tries_left - 1))
            self._retries.add(retry)
            retry.add_done_callback(self._retries.discard)

    async def _send_later(self, conversation: str, text: str, tries_left: int) -> None:
        await asyncio.sleep(NOTICE_RETRY_SECONDS)
        await self.send(conversation, text, tries_left)
