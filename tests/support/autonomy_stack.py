"""Autonomy end to end on one clock: a real redis-server, a real router (a Worker with every
skill, in a thread) holding the Moltbook key, the Moltbook fake, and the agent's own cycle
(real loop, workspace, budget and router client) driving an `EagerPoster`.

The clock is injected into the router's policy (quotas, pacing, circuit), the budget's ledger
and the cycle, so days of cycles run in seconds, with no sleep.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.app import build_cycle, build_loop
from agent.autonomy.cycle import AutonomyCycle
from agent.config.settings import settings_from_config
from agent.cost.budget import BudgetGuard
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.link.redis_pool import build_redis
from router.app import build_worker
from router.config.settings import RouterSettings
from router.queue.worker import Worker
from router.registry import discover_skills
from tests.support.eager_poster import EagerPoster
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.recording_server import Recorded, Response, json_response
from tests.support.redis_server import RedisServer

DAY = 86_400.0
T0 = 1_800_000_000.0 - (1_800_000_000.0 % DAY) + 8 * 3600  # 08:00 UTC on a day in 2027


class Clock:
    def __init__(self, start: float = T0) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


class SimMoltbook(FakeMoltbook):
    """The Moltbook fake, whose writes alone can be made to fail (reads keep working)."""

    fail_writes = False

    def failure(self, request: Recorded) -> Response | None:
        if self.fail_writes and request.method == "POST":
            return json_response(500, {"success": False, "error": "internal server error"})
        return super().failure(request)


@dataclass
class AutonomyStack:
    redis: RedisServer
    moltbook: SimMoltbook
    worker: Worker
    cycle: AutonomyCycle
    llm: EagerPoster
    metered: MeteredLLM
    clock: Clock
    workspace: Path
    notices: list[tuple[str, str]] = field(default_factory=list)

    def add_posts(self, count: int, submolt: str = "general") -> None:
        for _ in range(count):
            self.moltbook.add_post(
                f"Question {uuid.uuid4().hex[:8]}", "What do agents think about bounds?", submolt=submolt
            )

    def agent_posts(self) -> list[Any]:
        return [p for p in self.moltbook.posts.values() if p.author == self.moltbook.agent]

    def agent_comments(self) -> list[dict[str, Any]]:
        return [c for p in self.moltbook.posts.values() for c in p.comments]

    def activity(self) -> list[dict[str, Any]]:
        path = self.workspace / "logs" / "activity.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@contextmanager
def autonomy_stack(
    tmp: Path,
    *,
    llm: EagerPoster | None = None,
    budget: dict[str, Any] | None = None,
    autonomy: dict[str, Any] | None = None,
    router_env: dict[str, str] | None = None,
    clock: Clock | None = None,
) -> Iterator[AutonomyStack]:
    clock = clock or Clock()
    llm = llm or EagerPoster()
    redis = RedisServer(persistent=False)
    redis.start()
    key = "moltbook_sk_" + uuid.uuid4().hex
    moltbook = SimMoltbook(api_key=key)
    moltbook.start()
    try:
        env = {
            "REDIS_URL": redis.router_url,
            "ROUTER_ID": "autonomy-sim",
            "ROUTER_DATA_DIR": str(tmp / "router"),
            "ROUTER_LOG_FILE": str(tmp / "router" / "router.log"),
            "MOLTBOOK_API_BASE": moltbook.base,
            **(router_env or {}),
        }
        worker = build_worker(RouterSettings.from_env(env), discover_skills(), {"MOLTBOOK_API_KEY": key})
        worker.policy.clock = clock
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        try:
            yield _agent_side(tmp, redis, moltbook, worker, llm, clock, budget, autonomy)
        finally:
            worker.stop()
            thread.join(timeout=30)
    finally:
        moltbook.stop()
        redis.cleanup()


def _agent_side(
    tmp: Path,
    redis: RedisServer,
    moltbook: SimMoltbook,
    worker: Worker,
    llm: EagerPoster,
    clock: Clock,
    budget: dict[str, Any] | None,
    autonomy: dict[str, Any] | None,
) -> AutonomyStack:
    workspace = tmp / "workspace"
    config = {
        "llm": {"provider": "scripted"},
        "timeout": 10,
        "budget": budget or {"daily_usd": 100, "total_usd": 1000},
        "channels": {
            "autonomy": {"enabled": True, "cycle_interval": 1800, "max_cycles": 500, **(autonomy or {})}
        },
    }
    env = {
        "SAFECLAW_WORKSPACE": str(workspace),
        "SAFECLAW_LOG_DIR": str(tmp / "logs"),
        "REDIS_URL": redis.agent_url,
    }
    settings = settings_from_config(config, tmp / "config.json", env)
    settings.workspace.ensure()
    notices: list[tuple[str, str]] = []

    def notify(kind: str, text: str) -> None:
        notices.append((kind, text))

    root = settings.workspace.root
    guard = BudgetGuard(
        settings.budget,
        CostLedger(root / "logs" / "cost.jsonl", clock),
        root / "logs" / "budget_alerts.json",
        notify,
        None,
        clock,
    )
    metered = MeteredLLM(llm, guard)
    conn = build_redis(settings)  # the agent's one pool, as agent.app builds it
    loop = build_loop(settings, llm=metered, conn=conn)
    cycle = build_cycle(settings, loop, conn, clock=clock, notify=notify)
    return AutonomyStack(redis, moltbook, worker, cycle, llm, metered, clock, root, notices)
