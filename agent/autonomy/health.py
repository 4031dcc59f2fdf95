"""Is autonomy stuck? No heartbeat for 3 cycle intervals, or one action running over 10 minutes.
`status`, `doctor` and the dashboard (through Redis) show it; the compose healthcheck runs
`start_agent.py autonomy health`, which exits 1 when stuck so the container is restarted."""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING

import redis

from agent.autonomy.state import StateFiles
from agent.status.line import Check
from protocol.autonomy_heartbeat import Heartbeat, stuck_reason

if TYPE_CHECKING:
    from agent.config.settings import AgentSettings

log = logging.getLogger("safeclaw.agent.autonomy")


def health_summary(beat: Heartbeat | None, now: float, paused: str = "") -> dict[str, object]:
    """What the dashboard reads from `Keys.agent_autonomy` (it judges `stuck` again by its own clock)."""
    reason = stuck_reason(beat, now)
    return {
        **(beat.__dict__ if beat else {}),
        "stuck": reason is not None,
        "stuck_reason": reason or "",
        "paused": paused,
    }


def publish_health(conn: redis.Redis, key: str, beat: Heartbeat | None, now: float, paused: str = "") -> None:
    try:
        conn.set(key, json.dumps(health_summary(beat, now, paused)), ex=7 * 24 * 3600)
    except redis.RedisError as exc:
        log.warning("cannot store autonomy's heartbeat in Redis: %s", exc)


def autonomy_check(settings: AgentSettings, now: float | None = None) -> Check | None:
    """A status/doctor line, or None when autonomy is off and has never run."""
    files = StateFiles(settings.workspace.root)
    beat = files.last_heartbeat()
    if not settings.channels.autonomy.enabled and beat is None:
        return None
    now = time.time() if now is None else now
    reason = stuck_reason(beat, now)
    if reason is not None:
        return Check(False, f"autonomy STUCK: {reason}; see {files.activity_path} and the agent log")
    assert beat is not None
    state = files.load() if files.state_path.exists() else None
    paused = f", paused ({state.pause.reason}: {state.pause.detail})" if state and state.pause else ""
    return Check(
        not paused,
        f"autonomy alive: cycle {beat.cycle_count}, {beat.current_action}, last heartbeat "
        f"{now - beat.timestamp:.0f}s ago{paused}",
    )


def health_command(settings: AgentSettings) -> int:
    check = autonomy_check(settings)
    if check is None:
        print("autonomy is off")
        return 0
    print(check.line())
    return 0 if "STUCK" not in check.text else 1
