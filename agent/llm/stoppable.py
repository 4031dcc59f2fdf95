"""A reply the owner can stop (Ctrl-C at the console) without stopping the agent.

The channel gives each message a stop event; `reply_stops(event)` sets it as the turn's while the
turn runs (a context variable: `asyncio.to_thread` carries it into the turn's thread). Every model
call of the turn goes through `StoppableLLM`: once the event is set, no new call starts and the
answer of the call under way is never used. `ReplyStopped` ends the turn as any refused answer
does (its words are the turn's reply in the history, no action of it runs).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from agent.errors import ReplyStopped
from agent.llm.base import BaseLLM
from agent.llm.usage import Usage

_stop: ContextVar[threading.Event | None] = ContextVar("safeclaw_reply_stop", default=None)


@contextlib.contextmanager
def reply_stops(event: threading.Event) -> Iterator[None]:
    """While in it, `event` set stops the turn at its next model call."""
    token = _stop.set(event)
    try:
        yield
    finally:
        _stop.reset(token)


def stopped() -> bool:
    event = _stop.get()
    return event is not None and event.is_set()


class StoppableLLM(BaseLLM):
    """`inner` as it is, but for a stopped reply (see the module's docstring)."""

    def __init__(self, inner: BaseLLM) -> None:
        super().__init__(inner.model, inner.timeout)
        self.inner = inner
        self.name = inner.name
        self.prompt_template = inner.prompt_template
        self.observes_results = inner.observes_results

    def __getattr__(self, name: str) -> Any:  # what a provider has of its own (tests' scripts)
        return getattr(self.inner, name)

    def chat(self, prompt: str) -> str:
        return self._unless_stopped(lambda: self.inner.chat(prompt))

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        return self._unless_stopped(lambda: self.inner.chat_structured(prompt, schema))

    def _unless_stopped(self, call: Callable[[], str]) -> str:
        if stopped():
            self.last_usage = Usage(0, 0)  # nothing was sent: nothing to count
            raise ReplyStopped
        self.last_usage = None
        try:
            text = call()
        finally:
            self.last_usage = self.inner.last_usage
        if stopped():
            raise ReplyStopped
        return text

    def estimate_input_tokens(self, prompt: str) -> int:
        return self.inner.estimate_input_tokens(prompt)

    def context_window(self) -> int | None:
        return self.inner.context_window()

    def prepare(self, prompt: str) -> None:
        self.inner.prepare(prompt)

    def check(self) -> None:
        self.inner.check()
