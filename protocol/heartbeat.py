"""A router's heartbeat as every reader reads it: its format and the one rule for "alive".

The router SETs `Keys.router_heartbeat(id)` to a JSON object every third of its TTL, with the key
expiring after the TTL. A reader takes a heartbeat as alive when it is a JSON object whose `ts` is
a finite number no older than twice the TTL the router wrote in it (`ttl`, 15 s when absent) and
not from the future. The agent, `status`/`doctor` and the dashboard all ask `read_heartbeat` and
`is_alive`, so they never disagree about whether a router is up.
"""

from __future__ import annotations

import json
import math
from typing import Any

DEFAULT_TTL = 15.0  # seconds (ROUTER_HEARTBEAT_TTL's default)
CLOCK_SKEW = 5.0  # seconds a heartbeat may seem to come from the future


def read_heartbeat(raw: str | bytes | None) -> dict[str, Any] | None:
    """The heartbeat object, or None for anything that is not one (a reader never fails on it)."""
    if raw is None:
        return None
    try:
        beat = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(beat, dict) or _number(beat.get("ts")) is None:
        return None
    return beat


def age(beat: dict[str, Any], now: float) -> float | None:
    ts = _number(beat.get("ts"))
    return None if ts is None else now - ts


def max_age(beat: dict[str, Any]) -> float:
    ttl = _number(beat.get("ttl"))
    return 2 * (ttl if ttl is not None and 0 < ttl <= 3600 else DEFAULT_TTL)


def is_alive(beat: dict[str, Any] | None, now: float) -> bool:
    if beat is None:
        return False
    seen = age(beat, now)
    return seen is not None and -CLOCK_SKEW <= seen <= max_age(beat)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
