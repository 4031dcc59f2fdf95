"""The live kill switch as a router honours it: the key the owner flips (`protocol.kill_switch`),
read before each side effect, and again right before each write request leaves
(`router.policy.last_moment`), so a change holds for the very next write, even of a command already
running, without a restart. `ROUTER_KILL_SWITCH=true` in a router's environment is a floor: the key
can switch that router off, never on.
"""

from __future__ import annotations

import redis

from protocol.keys import Keys
from protocol.kill_switch import UNREADABLE, KillState, flip, parse

__all__ = ["UNREADABLE", "KillState", "flip", "parse", "read"]


def read(conn: redis.Redis, keys: Keys, floor: bool) -> KillState:
    """The switch as a router must honour it now."""
    if floor:
        return KillState(True, "environment", "ROUTER_KILL_SWITCH")
    return parse(conn.get(keys.kill_switch))
