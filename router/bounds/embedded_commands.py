"""What the embedded store (`router.bounds.embedded`) answers: the Redis commands the bounds use,
as one surface shared by the store (each command run at once, in its own transaction) and its
pipeline (commands queued, then run together in one), and the pieces of Redis's semantics both
need (values as text, score limits, index ranges).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

Command = tuple[str, tuple[Any, ...], dict[str, Any]]


class StoreError(Exception):
    """The store cannot be opened or refused a command (a wrong type, not a number)."""


def stored_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float):
        return repr(value)
    return str(value)


def score_bound(raw: Any, low: bool) -> tuple[float, bool]:
    """A ZRANGEBYSCORE limit ("-inf", "(1.5", 3) as (value, exclusive)."""
    text = stored_text(raw).strip()
    exclusive = text.startswith("(")
    text = text[1:] if exclusive else text
    if text in ("-inf", "+inf", "inf"):
        return (-math.inf if text == "-inf" else math.inf), False
    try:
        return float(text), exclusive
    except ValueError:
        raise StoreError(f"{'min' if low else 'max'} {raw!r} is not a float") from None


class Commands:
    """The commands, each handed to `_call`: run at once (the store) or queued (a pipeline)."""

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def get(self, name: str) -> Any:
        return self._call("get", name)

    def set(self, name: str, value: Any, ex: int | None = None, get: bool = False) -> Any:
        return self._call("set", name, value, ex=ex, get=get)

    def getdel(self, name: str) -> Any:
        return self._call("getdel", name)

    def delete(self, *names: str) -> Any:
        return self._call("delete", *names)

    def incr(self, name: str, amount: int = 1) -> Any:
        return self._call("incr", name, amount)

    def decr(self, name: str, amount: int = 1) -> Any:
        return self._call("incr", name, -amount)

    def expire(self, name: str, time: int) -> Any:
        return self._call("expire", name, time)

    def ttl(self, name: str) -> Any:
        return self._call("ttl", name)

    def exists(self, *names: str) -> Any:
        return self._call("exists", *names)

    def zadd(self, name: str, mapping: Mapping[str, float]) -> Any:
        return self._call("zadd", name, dict(mapping))

    def zrem(self, name: str, *members: str) -> Any:
        return self._call("zrem", name, *members)

    def zrange(self, name: str, start: int, end: int, withscores: bool = False) -> Any:
        return self._call("zrange", name, start, end, withscores=withscores)

    def zremrangebyscore(self, name: str, min: Any, max: Any) -> Any:
        return self._call("zremrangebyscore", name, min, max)

    def zrangebyscore(self, name: str, min: Any, max: Any, withscores: bool = False) -> Any:
        return self._call("zrangebyscore", name, min, max, withscores=withscores)

    def zcard(self, name: str) -> Any:
        return self._call("zcard", name)

    def lpush(self, name: str, *values: Any) -> Any:
        return self._call("lpush", name, *values)

    def ltrim(self, name: str, start: int, end: int) -> Any:
        return self._call("ltrim", name, start, end)

    def lrange(self, name: str, start: int, end: int) -> Any:
        return self._call("lrange", name, start, end)


class Runner(Protocol):
    """The store: runs a pipeline's commands in one transaction, answering each in order."""

    def run(self, commands: list[Command]) -> list[Any]: ...


class EmbeddedPipeline(Commands):
    def __init__(self, store: Runner) -> None:
        self.store = store
        self.commands: list[Command] = []

    def _call(self, name: str, *args: Any, **kwargs: Any) -> EmbeddedPipeline:
        self.commands.append((name, args, kwargs))
        return self

    def execute(self) -> list[Any]:
        commands, self.commands = self.commands, []
        return self.store.run(commands) if commands else []


def index_range(items: list[Any], start: int, end: int) -> list[Any]:
    """Redis's inclusive index range, negative indexes counting from the end."""
    size = len(items)
    first = max(0, start + size if start < 0 else start)
    last = end + size if end < 0 else min(end, size - 1)
    return items[first : last + 1] if first <= last else []
