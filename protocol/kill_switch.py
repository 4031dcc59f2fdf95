"""The live kill switch's key as every process reads and writes it.

The owner flips it (dashboard, `./safeclaw stop-posting`); every router reads it before each side
effect (`router.policy.kill_switch.read`), and `status` reads it too, so what it shows is the
switch itself, never a router's last heartbeat. A value that cannot be read as `{"on": bool}`
counts as on (fail closed).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.keys import Keys

if TYPE_CHECKING:
    import redis


@dataclass(frozen=True)
class KillState:
    on: bool
    source: str  # "environment" (ROUTER_KILL_SWITCH), "owner" (the live key) or "" when off
    by: str = ""
    since: float | None = None


UNREADABLE = KillState(True, "owner", "an unreadable kill-switch value (fail closed)")


def parse(raw: str | bytes | None) -> KillState:
    """The switch as the key holds it; anything that is not plainly `{"on": bool}` is on."""
    if raw is None:
        return KillState(False, "")
    try:
        value = json.loads(raw)
    except Exception:  # not UTF-8, not JSON, nested past the stack, a number past the digit limit
        return UNREADABLE
    if not isinstance(value, dict) or not isinstance(value.get("on"), bool):
        return UNREADABLE
    on, by = value["on"], value.get("by")
    by = by[:80] if isinstance(by, str) else ""
    return KillState(on, "owner" if on else "", by, _time(value.get("ts")))


def _time(value: object) -> float | None:
    """When the switch was flipped, if the key says so plainly (a finite number of seconds)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None


def flip(conn: redis.Redis, keys: Keys, on: bool, by: str) -> dict[str, Any]:
    """The owner's side (control user): set the switch; returns what was written."""
    value = {"on": on, "by": by[:80], "ts": time.time()}
    conn.set(keys.kill_switch, json.dumps(value))
    return value
