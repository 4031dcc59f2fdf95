"""A deterministic provider that replays scripted replies: for tests and demos, never for real use."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.errors import ConfigError, LLMError
from agent.llm.base import BaseLLM
from agent.llm.usage import Usage

if TYPE_CHECKING:
    from agent.config.sections import LLMSettings

REPLIES_ENV = "SAFECLAW_SCRIPTED_REPLIES"


class ScriptedLLM(BaseLLM):
    """Pops one queued reply per `chat()`; a queued exception is raised instead; every prompt is kept."""

    name = "scripted"

    def __init__(self, replies: Iterable[str | Exception] | None = None, timeout: float = 60.0) -> None:
        super().__init__("scripted", timeout)
        self.replies: deque[str | Exception] = deque(replies or [])
        self.prompts: list[str] = []
        self.schemas: list[dict[str, Any]] = []  # the schema of each structured request, in order

    def enqueue(self, *replies: str | Exception) -> None:
        self.replies.extend(replies)

    def chat(self, prompt: str) -> str:
        return self._next(prompt)

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """The next queued reply, which `chat_json` then checks against `schema` like any provider's."""
        self.schemas.append(schema)
        return self._next(prompt)

    def _next(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.replies:
            raise LLMError(self.name, "script exhausted", f"enqueue more, or list them in ${REPLIES_ENV}")
        reply = self.replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        self.last_usage = scripted_usage(prompt, reply)
        return reply

    def estimate_input_tokens(self, prompt: str) -> int:
        return scripted_usage(prompt, "").input_tokens

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> ScriptedLLM:
        """Replies from the JSON list of strings in the file $SAFECLAW_SCRIPTED_REPLIES names, if set."""
        path = settings.scripted_replies
        return cls(load_replies(Path(path)) if path else [], settings.timeout)


def scripted_usage(prompt: str, reply: str) -> Usage:
    """Deterministic counts for tests and benchmarks: one token per whitespace-separated word."""
    return Usage(len(prompt.split()), len(reply.split()))


def load_replies(path: Path) -> list[str]:
    """Read a JSON list of strings; anything else is a ConfigError that names the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{REPLIES_ENV}: cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise ConfigError(f"{REPLIES_ENV}: {path} is not valid JSON: {e}") from None
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ConfigError(f"{REPLIES_ENV}: {path} must hold a JSON list of strings")
    return data
