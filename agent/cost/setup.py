"""Wiring the budget from the settings: the ledger, the guard, the owner's alerts, the Redis summary."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import redis

from agent.cost.budget import BudgetGuard, BudgetStatus
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.errors import ConfigError
from agent.llm.base import BaseLLM
from agent.owner.alerts import OwnerNotifier
from protocol.keys import Keys

if TYPE_CHECKING:
    from agent.config.settings import AgentSettings

log = logging.getLogger("safeclaw.agent.cost")
SUMMARY_TTL = 7 * 24 * 3600  # seconds; refreshed by every call


class RedisCostSummary:
    """Keeps `Keys.agent_cost` (JSON) current for the dashboard; Redis trouble is logged, not raised."""

    def __init__(self, conn: redis.Redis, keys: Keys) -> None:
        self.key = keys.agent_cost
        self.conn = conn
        self._warned = False

    def __call__(self, status: BudgetStatus) -> None:
        try:
            self.conn.set(self.key, json.dumps(status.summary()), ex=SUMMARY_TTL)
            self._warned = False
        except redis.RedisError as exc:
            if not self._warned:
                self._warned = True
                log.warning("cannot store the cost summary in Redis (%s); cost.jsonl has it", exc)


def build_guard(
    settings: AgentSettings, notify: OwnerNotifier | None = None, conn: redis.Redis | None = None
) -> BudgetGuard:
    """The budget, publishing its summary for the dashboard on `conn` (the process's pool) if given."""
    root = settings.workspace.root
    publish = RedisCostSummary(conn, settings.keys) if conn is not None else None
    notifier = notify or OwnerNotifier.from_settings(root, settings.channels.telegram)
    ledger = CostLedger(root / "logs" / "cost.jsonl")
    problem = ledger.check_writable()
    if problem is not None:
        raise ConfigError(
            f"{ledger.path} cannot be written ({problem}): every LLM call's cost is recorded there "
            "before the next one is sent; free space on that disk or fix its permissions"
        )
    return BudgetGuard(
        settings.budget,
        ledger,
        root / "logs" / "budget_alerts.json",
        notifier,
        publish,
    )


def budget_status(settings: AgentSettings) -> BudgetStatus:
    """What the ledger says now, without alerting anyone (for status and doctor)."""
    root = settings.workspace.root
    guard = BudgetGuard(settings.budget, CostLedger(root / "logs" / "cost.jsonl"), root / "logs" / "x")
    return guard.status()


def meter(llm: BaseLLM, settings: AgentSettings, guard: BudgetGuard | None = None) -> MeteredLLM:
    """`llm` behind the budget (an LLM already metered is returned as it is)."""
    if isinstance(llm, MeteredLLM):
        return llm
    return MeteredLLM(llm, guard or build_guard(settings))
