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
