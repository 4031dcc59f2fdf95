"""The budget's summary: kept current in Redis for the dashboard after every call (`RedisCostSummary`,
handed to the guard by `agent.app.build_guard`), and read from the ledger for status and doctor."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import redis

from agent.cost.budget import BudgetGuard, BudgetStatus
from agent.cost.ledger import CostLedger
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


def budget_status(settings: AgentSettings) -> BudgetStatus:
    """What the ledger says now, without alerting anyone (for status and doctor)."""
    root = settings.workspace.root
    guard = BudgetGuard(settings.budget, CostLedger(root / "logs" / "cost.jsonl"), root / "logs" / "x")
    return guard.status()
