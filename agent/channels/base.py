"""The channel interface: where messages come from and replies go. One module per channel."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from protocol.origin import Origin


@dataclass
class IncomingMessage:
    channel: str  # "console", "telegram", ...
    conversation: str  # history key: "console", "telegram:<chat id>", ...
    user_id: str  # who wrote it, as the channel names them
    text: str
    received_at: float = field(default_factory=time.time)
    # None: the owner wrote it. Otherwise who did, e.g. "@alice.bsky.social on Bluesky": the text
    # is then outside data, fenced in the prompt, never read as the owner's words.
    outside_author: str | None = None
    # Who wrote it, when the channel knows more than the author (a mention's post, to reply to).
    source: Origin | None = None
    # Set by the channel when the owner stops this reply (Ctrl-C at the console): the turn ends at
    # its next model call and nothing more is done for it (`agent.llm.stoppable`).
    stop: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)


# The agent's answer to one message (runs a whole Think-Act-Observe turn).
MessageHandler = Callable[[IncomingMessage], Awaitable[str]]


class BaseChannel(ABC):
    name: str = "base"

    def __init__(self, handle: MessageHandler) -> None:
        self.handle = handle

    @abstractmethod
    async def start(self) -> None:
        """Run until stopped. The console also returns by itself at end of input."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop taking messages and release what the channel holds. Safe to call twice."""

    @abstractmethod
    async def send(self, conversation: str, text: str) -> None:
        """Deliver a reply (or any message) to a conversation of this channel."""

    def stop_reply(self) -> bool:
        """The owner's Ctrl-C: stop the reply under way, if this channel has one (True), rather
        than the agent."""
        return False

    async def progress(self, conversation: str, text: str) -> None:
        """Show one line of a long command's progress (e.g. /explain's searches) while it works."""
        await self.send(conversation, f"… {text}")
