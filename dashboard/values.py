"""Checked reads of values other processes wrote (the agent's login can write its own keys and
files with anything): each gives the expected type or a default, never an exception."""

from __future__ import annotations

import json
import math
from typing import Any


def json_object(raw: Any) -> dict[str, Any] | None:
    """A JSON object, or None for anything else (bad JSON, a list, huge integers, deep nesting)."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def number(value: Any) -> float | None:
    """A finite int or float (never a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        result = float(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text(value: Any, limit: int = 300) -> str:
    """A string cut to `limit` characters; '' for anything that is not a string."""
    return value[:limit] if isinstance(value, str) else ""


def texts(value: Any, limit: int = 100, count: int = 50) -> list[str]:
    """The strings of a list (others dropped), each cut, at most `count`."""
    if not isinstance(value, list):
        return []
    return [item[:limit] for item in value[:count] if isinstance(item, str)]


AGENT_VALUE_CHARS = 64 * 1024  # the most of a key the agent's login writes that is read at all
TOO_LONG = "\x00too long"  # what such a key reads as past that: unreadable, never parsed


def read_agent_key(pipe: Any, key: str) -> None:
    """Queue a bounded read of a key the agent's login writes: it could hold hundreds of megabytes,
    and every status read (each page, each live update) would fetch and parse them all."""
    pipe.getrange(key, 0, AGENT_VALUE_CHARS)


def agent_value(raw: Any) -> Any:
    """What `read_agent_key` read: None for a missing key, TOO_LONG past the bound or when the read
    was refused (a Redis login made before it could read part of a key), else the value."""
    if isinstance(raw, Exception):
        return TOO_LONG
    if raw in (None, "", b""):
        return None
    return TOO_LONG if len(raw) > AGENT_VALUE_CHARS else raw


def all_read(found: list[Any], agent_keys: tuple[int, ...]) -> list[Any]:
    """A pipeline's answers (run with raise_on_error=False): a failed read of an agent key is left
    for `agent_value`; any other failure is raised, as the pipeline would have."""
    for place, answer in enumerate(found):
        if isinstance(answer, Exception) and place not in agent_keys:
            raise answer
    return found
