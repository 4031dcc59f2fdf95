"""Autonomy's heartbeat as every reader reads it: its record and the one rule for "stuck".

The agent writes it to its workspace and publishes it under `Keys.agent_autonomy`; the agent's
own health check and the dashboard (by its own clock) both ask `stuck_reason`, so they never
disagree about whether autonomy is stuck: no heartbeat for 3 cycle intervals, or one action
running over 10 minutes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

IDLE = "idle"
MISSED_INTERVALS = 3
MAX_ACTION_SECONDS = 600.0


@dataclass
class Heartbeat:
    timestamp: float  # when this was written
    current_action: str  # what the cycle is doing now; "idle" between cycles
    action_started_at: float
    cycle_count: int
    last_cycle_at: float | None
    cycle_interval: float
    pid: int = field(default_factory=os.getpid)

    @classmethod
    def from_dict(cls, data: Any) -> Heartbeat | None:
        try:
            return cls(**data) if isinstance(data, dict) else None
        except TypeError:
            return None


def stuck_reason(beat: Heartbeat | None, now: float) -> str | None:
    if beat is None:
        return "no autonomy heartbeat yet"
    silent = now - beat.timestamp
    if silent > MISSED_INTERVALS * beat.cycle_interval:
        return (
            f"no heartbeat for {silent:.0f}s (over {MISSED_INTERVALS} intervals of {beat.cycle_interval:g}s)"
        )
    running = now - beat.action_started_at
    if beat.current_action != IDLE and running > MAX_ACTION_SECONDS:
        return f"'{beat.current_action}' has run for {running:.0f}s (over {MAX_ACTION_SECONDS:.0f}s)"
    return None
