"""The live kill switch: a Redis key the owner flips (dashboard, `./safeclaw stop-posting`).

Every router reads it before each side effect, so a change holds for the very next command
(well within a second) without a restart. `ROUTER_KILL_SWITCH=true` in a router's environment
is a floor: the key can switch that router off, never on. A value that cannot be read as
`{"on": bool}` counts as on (fail closed).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis

from protocol.keys import Keys


@dataclass(frozen=True)
class KillState:
    on: bool
    source: str  # "environment" (ROUTER_KILL_SWITCH), "owner" (the live key) or "" when off
    by: str = ""
    since: float | None = None


def parse(raw: str | bytes | None) -> KillState:
    if raw is None:
        return KillState(False, "")
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return KillState(True, "owner", "an unreadable kill-switch value (fail closed)")
    if not isinstance(value, dict) or not isinstance(value.get("on"), bool):
        return KillState(True, "owner", "an unreadable kill-switch value (fail closed)")
    since = value.get("ts")
    return KillState(
        value["on"],
        "owner" if value["on"] else "",
        str(value.get("by", ""))[:80],
        float(since) if isinstance(since, int | float) else None,
    )


def read(conn: redis.Redis, keys: Keys, floor: bool) -> KillState:
    """The switch as a router must honour it now."""
    if floor:
        return KillState(True, "environment", "ROUTER_KILL_SWITCH")
    return parse(conn.get(keys.kill_switch))


def flip(conn: redis.Redis, keys: Keys, on: bool, by: str) -> dict[str, Any]:
    """The owner's side (control user): set the switch; returns what was written."""
    value = {"on": on, "by": by[:80], "ts": time.time()}
    conn.set(keys.kill_switch, json.dumps(value))
    return value
