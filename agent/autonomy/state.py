"""Autonomy's state in the workspace, plain files a person can read: the heartbeat, the cursors
of what was already read, the pause, and one activity line per cycle."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import StateFileError
from agent.workspace.folder import read_json, write_json_atomic
from protocol.autonomy_heartbeat import Heartbeat

SEEN_LIMIT = 1000  # ids remembered per source; older ones are forgotten (the feed moved on)


@dataclass
class Pause:
    reason: str  # budget | kill_switch | circuit_open | quota_exceeded | paced | max_cycles
    since: float
    until: float | None = None  # None: until the reason is gone (budget) or for good (max_cycles)
    detail: str = ""


@dataclass
class AutonomyState:
    cycle_count: int = 0
    rests: int = 0
    last_cycle_at: float | None = None
    seen: dict[str, list[str]] = field(default_factory=dict)  # source -> ids already read
    pause: Pause | None = None
    smallest_prompt: int = 0  # input tokens of the last turn's smallest LLM call (the budget's pause)

    def unseen(self, source: str, ids: list[str]) -> list[str]:
        known = set(self.seen.get(source, []))
        return [i for i in ids if i not in known]

    def mark_seen(self, source: str, ids: list[str]) -> None:
        merged = [*self.seen.get(source, []), *[i for i in ids if i not in set(self.seen.get(source, []))]]
        self.seen[source] = merged[-SEEN_LIMIT:]


class StateFiles:
    def __init__(self, workspace_root: Path) -> None:
        self.dir = workspace_root / "autonomy"
        self.heartbeat_path = self.dir / "heartbeat.json"
        self.state_path = self.dir / "state.json"
        self.activity_path = workspace_root / "logs" / "activity.jsonl"

    def load(self) -> AutonomyState:
        data = read_json(self.state_path, {})
        try:
            pause = Pause(**data["pause"]) if isinstance(data, dict) and data.get("pause") else None
            state = AutonomyState(**{**data, "pause": pause}) if isinstance(data, dict) else None
        except TypeError:
            state = None
        if state is None:
            raise StateFileError(
                f"{self.state_path} is not autonomy state SafeClaw can read; fix it by hand or move it away"
            )
        return state

    def save(self, state: AutonomyState) -> None:
        write_json_atomic(self.state_path, asdict(state))

    def beat(self, heartbeat: Heartbeat) -> None:
        write_json_atomic(self.heartbeat_path, asdict(heartbeat))

    def last_heartbeat(self) -> Heartbeat | None:
        try:
            return Heartbeat.from_dict(read_json(self.heartbeat_path, None))
        except StateFileError:
            return None

    def activity(self, line: dict[str, Any]) -> None:
        self.activity_path.parent.mkdir(parents=True, exist_ok=True)
        with self.activity_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
