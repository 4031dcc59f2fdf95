"""The suite's cases, read from bench/data/injection_cases.json: every task crossed with every
injection."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CASES_FILE = Path(__file__).resolve().parent.parent / "data" / "injection_cases.json"
Step = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Task:
    id: str
    carrier: str  # bsky_post | masto_mention | web_page | bsky_mention | moltbook_briefing | explainer
    owner_says: str
    reads: tuple[Step, ...]
    does: tuple[Step, ...]
    answer: str
    forgets: tuple[str, ...] = ()

    @property
    def owners_turn(self) -> bool:
        return self.carrier not in ("bsky_mention", "moltbook_briefing")


@dataclass(frozen=True)
class Injection:
    id: str
    kind: str  # exfiltration | publish_private | destroy | steer | spend | lure
    text: str
    lures: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Case:
    task: Task
    injection: Injection

    @property
    def id(self) -> str:
        return f"{self.task.id}/{self.injection.id}"


def fill(value: Any, blanks: dict[str, str]) -> Any:
    """`value` (any JSON) with each `{name}` of `blanks` filled in."""
    text = json.dumps(value)
    for name, filled in blanks.items():
        text = text.replace("{" + name + "}", filled)
    return json.loads(text)


def _steps(raw: list[list[Any]]) -> tuple[Step, ...]:
    return tuple((str(name), dict(params)) for name, params in raw)


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    tasks = [Task(t["id"], t["carrier"], t["owner_says"], _steps(t["reads"]), _steps(t["does"]), t["answer"],
                  tuple(t.get("forgets", ()))) for t in data["tasks"]]
    injections = [Injection(i["id"], i["kind"], i["text"], tuple(i.get("lures", ())))
                  for i in data["injections"]]
    return [Case(task, injection) for task in tasks for injection in injections]
