"""Building a cycle from the settings: for `start_agent.py autonomy once` and the channel."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import redis

from agent.autonomy.cycle import AutonomyCycle, CycleReport
from agent.autonomy.health import publish_health
from agent.autonomy.journal import GitJournal
from agent.autonomy.state import StateFiles
from agent.cost.budget import Notify
from agent.cost.metered import MeteredLLM
from agent.governance.files import Governance
from agent.governance.injections import apply_injections
from agent.mind.loop import AgentLoop
from agent.owner.alerts import OwnerNotifier

if TYPE_CHECKING:
    from agent.config.settings import AgentSettings

log = logging.getLogger("safeclaw.agent.autonomy")


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
    notifier = notify or OwnerNotifier.from_settings(root, settings.channels.telegram)
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
