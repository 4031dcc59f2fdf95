"""The agent's wiring: settings -> the process's one Redis pool and the owner's notifier (one of
each per process), the budget, the LLM (metered by it), the router port, the loop, the service or
one autonomy cycle; the entry points (`start_agent`, `python -m agent.explain`) build from here. Every
part that talks to Redis gets a client on the one pool (`build_redis`); none opens its own."""

from __future__ import annotations

import time
from collections.abc import Callable

import redis

from agent.actions import local_actions
from agent.autonomy.cycle import AutonomyCycle, CycleReport
from agent.autonomy.health import publish_health
from agent.autonomy.journal import GitJournal
from agent.autonomy.state import StateFiles
from agent.config.settings import AgentSettings
from agent.cost.budget import BudgetGuard, Notify
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM, meter
from agent.cost.summary import RedisCostSummary
from agent.errors import ConfigError
from agent.governance.files import Governance
from agent.governance.injections import apply_injections
from agent.link.pending_commands import PendingCommands
from agent.link.redis_pool import build_redis, refuse_unsafe
from agent.link.router_client import NoRouter, RouterClient
from agent.llm import create_llm
from agent.llm.base import BaseLLM
from agent.llm.stoppable import StoppableLLM
from agent.mind.act import RouterPort
from agent.mind.loop import AgentLoop, LoopLimits
from agent.owner.alerts import OwnerNotifier
from agent.service import AgentService


def build_llm(settings: AgentSettings) -> BaseLLM:
    return create_llm(settings.llm)


def stoppable(llm: BaseLLM) -> BaseLLM:
    """`llm` stopping with a reply the owner stopped (one already metered is wrapped already)."""
    return llm if isinstance(llm, MeteredLLM | StoppableLLM) else StoppableLLM(llm)


def build_router(settings: AgentSettings, conn: redis.Redis | None) -> RouterPort:
    """The router client on the process's pool (`conn`), or `NoRouter` without Redis."""
    if conn is None:
        return NoRouter()
    outbox = PendingCommands(settings.workspace)
    return RouterClient(conn, settings.keys, settings.timeout, outbox)


def build_notifier(settings: AgentSettings) -> OwnerNotifier:
    return OwnerNotifier.from_settings(settings.workspace.root, settings.channels.telegram)


def build_guard(
    settings: AgentSettings, notify: OwnerNotifier | None = None, conn: redis.Redis | None = None
) -> BudgetGuard:
    """The budget, publishing its summary for the dashboard on `conn` (the process's pool) if given."""
    root = settings.workspace.root
    publish = RedisCostSummary(conn, settings.keys) if conn is not None else None
    notifier = notify or build_notifier(settings)
    ledger = CostLedger(root / "logs" / "cost.jsonl")
    problem = ledger.check_writable()
    if problem is not None:
        raise ConfigError(
            f"{ledger.path} cannot be written ({problem}): every LLM call's cost is recorded there "
            "before the next one is sent; free space on that disk or fix its permissions"
        )
    return BudgetGuard(settings.budget, ledger, root / "logs" / "budget_alerts.json", notifier, publish)


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
        # Every LLM call of the agent goes through this one budget check, chat and autonomy alike,
        # and stops with the reply the owner stopped.
        llm=meter(stoppable(llm or build_llm(settings)), guard),
        local=local_actions(),
        router=router or build_router(settings, conn),
        limits=LoopLimits(settings.max_steps, settings.max_format_retries, settings.max_reply_chars),
        browser=settings.browser,
    )
    loop.autonomy_hold_writes = settings.channels.autonomy.approve_public_writes
    return loop


def build_cycle(
    settings: AgentSettings,
    loop: AgentLoop,
    conn: redis.Redis | None,
    clock: Callable[[], float] = time.time,
    notify: Notify | None = None,
) -> AutonomyCycle:
    """A cycle on `loop` (its turns and the chat's take turns; its router gets the scoring gate).
    `conn` (the process's pool, None without Redis) takes rule injections and publishes health."""
    if not isinstance(loop.llm, MeteredLLM):
        raise TypeError("autonomy needs the metered LLM of build_loop (the budget is checked there)")
    root = settings.workspace.root
    governance = Governance(root)
    governance.ensure()
    notifier = notify or build_notifier(settings)
    journal = GitJournal(root) if settings.channels.autonomy.git_journal else None
    files = StateFiles(root)

    def before_turn() -> None:
        if conn is not None:
            apply_injections(conn, settings.keys, governance)

    def after_cycle(report: CycleReport) -> None:
        if conn is not None:
            beat = files.last_heartbeat()
            state = files.load()
            paused = state.pause.reason if state.pause else ""
            publish_health(conn, settings.keys.agent_autonomy, beat, beat.timestamp if beat else 0.0, paused)
        if journal is not None:
            journal.commit(
                f"cycle {report.cycle}: {report.outcome}"
                + (f", {len(report.public)} public action(s)" if report.public else "")
            )

    return AutonomyCycle(
        settings.channels.autonomy,
        loop,
        loop.router,
        loop.llm.guard,
        notifier,
        clock,
        before_turn=before_turn,
        after_cycle=after_cycle,
    )


def build_service(settings: AgentSettings) -> AgentService:
    """The running agent: its loop and channels, telling the owner through one notifier; its
    autonomy channel's cycle is built on the same loop and pool when that channel starts."""
    notifier = build_notifier(settings)
    conn = build_redis(settings)
    refuse_unsafe(conn)
    loop = build_loop(settings, notifier=notifier, conn=conn)

    def make_cycle() -> AutonomyCycle:
        return build_cycle(settings, loop, conn, notify=notifier)

    return AgentService(settings, loop, notifier, conn, make_cycle)


def run_autonomy_once(settings: AgentSettings) -> int:
    """Exactly one cycle; prints its outcome on one line."""
    notifier = build_notifier(settings)
    conn = build_redis(settings)
    refuse_unsafe(conn)
    cycle = build_cycle(settings, build_loop(settings, notifier=notifier, conn=conn), conn, notify=notifier)
    report = cycle.run_once()
    extra = f" — {report.detail}" if report.detail and report.outcome != "acted" else ""
    print(
        f"autonomy cycle {report.cycle}: {report.outcome}; {report.new_items} new item(s), "
        f"{report.llm_calls} LLM call(s), {len(report.public)} public action(s){extra}"
    )
    return 0
