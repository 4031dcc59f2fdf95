"""What a provider may know about the turn besides its prompt: the owner's message and the actions.

Most providers only read the prompt. The embedded model reads this too: it picks an action from
a closed list and fills that action's parameters under grammars built from these schemas, which
is the only way a 135M-parameter model acts reliably. The loop sets it around each `chat()`; a
context variable passes it through wrappers (the cost meter) without changing their interface.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TurnRequest:
    user_message: str  # as the owner (or an outside author) wrote it, unescaped
    schemas: dict[str, dict[str, Any]]  # every action the reply may name -> its params schema
    instructions: dict[str, str] = field(default_factory=dict)  # action -> its catalogue instruction
    memory: dict[str, Any] = field(default_factory=dict)  # key -> remembered value
    outside_author: str | None = None  # set when the owner did not write the message


_current: ContextVar[TurnRequest | None] = ContextVar("safeclaw_turn_request", default=None)


@contextlib.contextmanager
def turn_request(request: TurnRequest) -> Iterator[None]:
    token = _current.set(request)
    try:
        yield
    finally:
        _current.reset(token)


def current_turn() -> TurnRequest | None:
    return _current.get()
