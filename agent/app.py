"""The agent's wiring: settings -> the process's one Redis pool and the owner's notifier (one of
each per process), the LLM (metered by the budget), the router port, the loop, the service or one
autonomy cycle; the entry points (`start_agent`, `python -m agent.explain`) build from here. Every part
that talks to Redis gets a client on the one pool (`build_redis`); none opens its own."""

from __future__ import annotations

import redis

from agent.actions import local_actions
from agent.autonomy.runner import build_cycle
from agent.config.settings import AgentSettings
from agent.cost.setup import build_guard, meter
from agent.link.pending_commands import PendingCommands
from agent.link.redis_pool import build_redis
from agent.link.router_client import NoRouter, RouterClient
from agent.llm import create_llm
from agent.llm.base import BaseLLM
from agent.mind.act import RouterPort
from agent.mind.loop import AgentLoop, LoopLimits
from agent.owner.alerts import OwnerNotifier
from agent.service import AgentService


def build_llm(settings: AgentSettings) -> BaseLLM:
    return create_llm(settings.llm)


def build_router(settings: AgentSettings, conn: redis.Redis | None) -> RouterPort:
    """The router client on the process's pool (`conn`), or `NoRouter` without Redis."""
    if conn is None:
        return NoRouter()
    outbox = PendingCommands(settings.workspace)
    return RouterClient(conn, settings.keys, settings.timeout, outbox)


def build_notifier(settings: AgentSettings) -> OwnerNotifier:
    return OwnerNotifier.from_settings(settings.workspace.root, settings.channels.telegram)


def build_loop(
    settings: AgentSettings,
    llm: BaseLLM | None = None,
    router: RouterPort | None = None,
    notifier: OwnerNotifier | None = None,
    conn: redis.Redis | None = None,
) -> AgentLoop:
    """The loop; `conn` is the process's pool (the router client and the budget's summary use it)."""
    settings.workspace.ensure()
    guard = build_guard(settings, notifier or build_notifier(settings), conn)
    loop = AgentLoop(
        workspace=settings.workspace,
        # Every LLM call of the agent goes through this one budget check, chat and autonomy alike.
        llm=meter(llm or build_llm(settings), settings, guard),
        local=local_actions(),
        router=router or build_router(settings, conn),
        limits=LoopLimits(settings.max_steps, settings.max_format_retries),
        browser=settings.browser,
    )
    loop.autonomy_hold_writes = settings.channels.autonomy.approve_public_writes
    return loop


def build_service(settings: AgentSettings) -> AgentService:
    """The running agent: its loop and channels, telling the owner through one notifier."""
    notifier = build_notifier(settings)
    conn = build_redis(settings)
    return AgentService(settings, build_loop(settings, notifier=notifier, conn=conn), notifier, conn)


def run_autonomy_once(settings: AgentSettings) -> int:
    """Exactly one cycle; prints its outcome on one line."""
    notifier = build_notifier(settings)
    conn = build_redis(settings)
    cycle = build_cycle(settings, build_loop(settings, notifier=notifier, conn=conn), conn, notify=notifier)
    report = cycle.run_once()
    extra = f" — {report.detail}" if report.detail and report.outcome != "acted" else ""
    print(
        f"autonomy cycle {report.cycle}: {report.outcome}; {report.new_items} new item(s), "
        f"{report.llm_calls} LLM call(s), {len(report.public)} public action(s){extra}"
    )
    return 0
