"""A cycle on a real loop, workspace and budget, with the router replaced by a recording stand-in
(the router itself is proved in the simulation test against real Redis and a real router)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from agent.actions import local_actions
from agent.autonomy.cycle import AutonomyCycle
from agent.config.channel_sections import AutonomySettings
from agent.cost.budget import BudgetGuard, BudgetSettings
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.cost.prices import parse_overrides
from agent.llm.base import BaseLLM
from agent.mind.loop import AgentLoop, LoopLimits
from agent.workspace.folder import Workspace

T0 = 1_800_000_000.0 - (1_800_000_000.0 % 86_400)


class Clock:
    def __init__(self, start: float = T0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@dataclass
class StandInRouter:
    feeds: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    write_error: str | None = None  # e.g. "kill_switch": every write answered denied with it
    retry_after: int | None = None  # sent with write_error, as the router's bounds do
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def add_post(self, submolt: str = "general", text: str = "hello agents", author: str = "other") -> str:
        ident = str(uuid.uuid4())
        self.feeds.setdefault(submolt, []).insert(
            0, {"id": ident, "title": "A post", "text": text, "author": author, "submolt": submolt}
        )
        return ident

    def writes(self) -> list[tuple[str, dict[str, Any]]]:
        return [c for c in self.calls if c[0] not in ("MOLTBOOK_FEED", "GET_NOTIFICATIONS")]

    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "", origin: Any = None
    ) -> dict[str, Any]:
        self.calls.append((action, params))
        if action == "MOLTBOOK_FEED":
            return {"status": "ok", "result": {"posts": list(self.feeds.get(params["submolt"], []))}}
        if action == "GET_NOTIFICATIONS":
            return {"status": "ok", "result": {"notifications": list(self.notifications)}}
        if self.write_error:
            denied = {"status": "denied", "error": self.write_error, "message": f"denied: {self.write_error}"}
            return {**denied, "retry_after": self.retry_after} if self.retry_after else denied
        return {"status": "ok", "result": {"id": "x", "url": "https://www.moltbook.com/post/x"}}


def make_cycle(
    workspace: Workspace,
    llm: BaseLLM,
    router: StandInRouter,
    *,
    daily: float = 100.0,
    usd_per_million: float = 0.0,
    clock: Clock | None = None,
    **autonomy: Any,
):
    clock = clock or Clock()
    notices: list[tuple[str, str]] = []

    def notify(kind: str, text: str) -> None:
        notices.append((kind, text))

    prices = parse_overrides({llm.model: {"input": usd_per_million, "output": usd_per_million}}, "test")
    guard = BudgetGuard(
        BudgetSettings(daily, 1000.0, prices),
        CostLedger(workspace.root / "logs" / "cost.jsonl", clock),
        workspace.root / "logs" / "alerts.json",
        notify,
        None,
        clock,
    )
    loop = AgentLoop(workspace, MeteredLLM(llm, guard), local_actions(), router, LoopLimits(max_steps=3))
    settings = AutonomySettings(enabled=True, cycle_interval=60, **autonomy)
    return AutonomyCycle(settings, loop, router, guard, notify, clock), notices, clock
