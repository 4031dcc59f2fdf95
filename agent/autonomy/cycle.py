"""One autonomy cycle, cheapest step first:
1. heartbeat; 2. budget (spent: pause, no call); 3. read what is new through the router (one
MOLTBOOK_FEED per submolt, the notifications; cursors in the workspace); 4. nothing new: rest,
no LLM call; 5. one turn with the governance files and the new items, the items fenced as
outside data; 6. every public text scored first (`gate.PublicTextGate`); 7. one activity line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from agent.autonomy import CONVERSATION
from agent.autonomy.briefing import AUTHOR, authors_shown, briefing, item_author, message_for
from agent.autonomy.gate import CycleEvents, PublicTextGate
from agent.autonomy.pauses import PAUSING_ERRORS, RESTING_ERRORS, pause_seconds
from agent.autonomy.reading import read_new
from agent.autonomy.state import AutonomyState, Pause, StateFiles
from agent.config.channel_sections import MIN_CYCLE_INTERVAL, AutonomySettings
from agent.cost.budget import BudgetGuard, Notify
from agent.cost.metered import MeteredLLM
from agent.cost.shares import OUTSIDE_POOL
from agent.governance.files import stamp
from agent.mind.act import RouterPort
from agent.mind.loop import AgentLoop
from protocol.autonomy_heartbeat import IDLE, Heartbeat

log = logging.getLogger("safeclaw.agent.autonomy")
AUTONOMY_SHARES = (OUTSIDE_POOL, "the autonomy channel")  # shares a cycle pays from


@dataclass
class CycleReport:
    cycle: int
    outcome: str  # acted | rested | paused:<reason> | stopped:max_cycles
    new_items: int = 0
    llm_calls: int = 0
    tokens: int = 0
    usd: float = 0.0
    public: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    read_errors: list[str] = field(default_factory=list)
    detail: str = ""


class AutonomyCycle:
    def __init__(
        self,
        settings: AutonomySettings,
        loop: AgentLoop,
        router: RouterPort,
        guard: BudgetGuard,
        notify: Notify,
        clock: Callable[[], float] = time.time,
        before_turn: Callable[[], object] | None = None,
        after_cycle: Callable[[CycleReport], object] | None = None,
    ) -> None:
        self.settings = settings
        self.loop = loop
        self.router = router  # reads go straight to the router; the turn's actions through the gate
        self.guard = guard
        self.notify = notify
        self.clock = clock
        self.before_turn = before_turn  # apply rule injections from the dashboard: at each cycle's start
        self.after_cycle = after_cycle  # e.g. the git journal
        self.files = StateFiles(loop.workspace.root)
        self.gate = PublicTextGate(loop.router, loop.llm, loop.workspace, settings.quality_threshold)
        loop.router = self.gate
        loop.briefings[CONVERSATION] = lambda: briefing(loop.workspace, settings, self._cycle_number)
        self._cycle_number = 0

    def apply_rules(self) -> None:
        """The owner's injected and accepted rules into DOS.md now (one cheap Redis read): at the
        start of every cycle, paused or not, and between cycles (`AutonomyChannel`)."""
        if self.before_turn is None:
            return
        try:
            self.before_turn()
        except Exception:  # never the reason a cycle fails; the entries wait on the list
            log.exception("applying rule injections failed; they stay queued")

    def run_once(self) -> CycleReport:
        self.apply_rules()
        state = self.files.load()
        now = self.clock()
        if state.cycle_count >= self.settings.max_cycles:
            return self._stop_at_max(state, now)
        if state.last_cycle_at and 0 <= now - state.last_cycle_at < MIN_CYCLE_INTERVAL:
            # `autonomy once` from a too-eager cron or timer: the 15 s floor holds across processes.
            detail = (
                f"the last cycle was {now - state.last_cycle_at:.1f}s ago; cycles are at least "
                f"{MIN_CYCLE_INTERVAL:g}s apart (nothing read, no LLM call)"
            )
            return CycleReport(state.cycle_count, "skipped:too_soon", detail=detail)
        state.cycle_count += 1
        self._cycle_number = state.cycle_count
        state.last_cycle_at = now
        self.files.save(state)  # at the start: a second process (or a crash and restart) sees it began
        self._beat(state, "budget check", now)
        report = self._paused(state, now) or self._read_and_act(state, now)
        self.files.save(state)
        self._beat(state, IDLE, self.clock())
        self.files.activity({"ts": round(now, 3), **asdict(report)})
        if self.after_cycle is not None:
            self.after_cycle(report)
        return report

    # -- pauses --------------------------------------------------------------------------------
    def _paused(self, state: AutonomyState, now: float) -> CycleReport | None:
        pause = state.pause
        if pause is not None and pause.reason in PAUSING_ERRORS:
            if pause.until is not None and now < pause.until:
                return CycleReport(state.cycle_count, f"paused:{pause.reason}", detail=pause.detail)
            self._resume(state, f"the {pause.reason.replace('_', ' ')} pause is over; trying again")
        status = self.guard.status()
        spent = status.exhausted() or self._unaffordable(state)
        share = next((s for s in status.outside_spent() if s in AUTONOMY_SHARES), None)
        if spent is None and share is not None:
            spent = "share"
            detail = (f"today's LLM budget share for {share} is spent; the owner's turns go on "
                      "(budget.outside_share, budget.channel_share in agent/config.json)")
        elif spent is not None:
            detail = f"the {spent} LLM budget is spent; raise budget.{spent}_usd in agent/config.json"
        if spent is not None:
            if state.pause is None or state.pause.reason != "budget":
                state.pause = Pause("budget", now, None, detail)
                self.notify("pause", f"autonomy paused: {detail}")
            return CycleReport(state.cycle_count, "paused:budget", detail=detail)
        if state.pause is not None and state.pause.reason == "budget":
            self._resume(state, "the LLM budget allows calls again")
        return None

    def _unaffordable(self, state: AutonomyState) -> str | None:
        """The budget that would refuse even the smallest call of the last turn: then the cycle
        pauses instead of reading and being refused at its first call."""
        llm = self.loop.llm
        if not isinstance(llm, MeteredLLM) or not state.smallest_prompt:
            return None
        return llm.refusal(state.smallest_prompt)

    def _resume(self, state: AutonomyState, why: str) -> None:
        state.pause = None
        self.notify("pause", f"autonomy resumed: {why}")

    def _stop_at_max(self, state: AutonomyState, now: float) -> CycleReport:
        report = CycleReport(
            state.cycle_count,
            "stopped:max_cycles",
            detail=f"max_cycles ({self.settings.max_cycles}) reached; raise "
            "channels.autonomy.max_cycles to go on",
        )
        if state.pause is None or state.pause.reason != "max_cycles":
            state.pause = Pause("max_cycles", now, None, report.detail)
            self.files.save(state)
            self.notify("pause", f"autonomy stopped: {report.detail}")
            self.files.activity({"ts": round(now, 3), **asdict(report)})
        self._beat(state, IDLE, now)
        return report

    # -- reading and acting --------------------------------------------------------------------
    def _read_and_act(self, state: AutonomyState, now: float) -> CycleReport:
        report = CycleReport(state.cycle_count, "rested")
        self._beat(state, "reading", now)
        new = read_new(self.router, self.settings.submolts, state)
        report.read_errors = new.errors
        items, fresh = new.items, new.fresh
        for source, ids in fresh.items():
            state.mark_seen(source, ids)
        if fresh:
            self.files.save(state)  # on disk before the turn: a crash mid-turn never answers twice
        report.new_items = len(items)
        items = self._affordable(items, report)
        if not items:
            state.rests += 1
            return report
        self._beat(state, "turn", self.clock())
        llm = self.loop.llm
        calls, tokens, usd = _meter(llm)
        self.gate.events = CycleEvents()
        if isinstance(llm, MeteredLLM):
            llm.smallest_prompt = llm.refused_prompt = None
        result = self.loop.run_turn(CONVERSATION, message_for(items), outside_author=AUTHOR,
                                    authors=authors_shown(items))
        if isinstance(llm, MeteredLLM) and llm.smallest_prompt:
            state.smallest_prompt = llm.smallest_prompt
        elif isinstance(llm, MeteredLLM) and llm.refused_prompt:  # its first call did not fit: pause next
            state.smallest_prompt = llm.refused_prompt
        after = _meter(llm)
        report.llm_calls, report.tokens, report.usd = after[0] - calls, after[1] - tokens, after[2] - usd
        report.outcome = "acted"
        report.refused = self.gate.events.refused
        report.public = [{k: v for k, v in e.items() if k != "params"} for e in self.gate.events.public]
        report.detail = result.reply[:300]
        self._after_public(state, self.gate.events, now)
        own = [
            str(e["result"]["id"])
            for e in self.gate.events.public
            if e["status"] == "ok" and isinstance(e.get("result"), dict) and e["result"].get("id")
        ]
        for submolt in self.settings.submolts:  # its own posts are not news to it
            state.mark_seen(f"feed:{submolt}", own)
        return report

    def _affordable(self, items: list[dict[str, Any]], report: CycleReport) -> list[dict[str, Any]]:
        """The items whose author's share of today's budget is not spent: one author's posts then
        stop costing anything, and never keep the other authors' posts from being answered."""
        spent = set(self.guard.status().outside_spent())
        kept = [item for item in items if item_author(item) not in spent]
        if len(kept) < len(items):
            report.detail = (f"{len(items) - len(kept)} new item(s) not shown: their author's share of "
                             "today's LLM budget is spent (budget.author_share)")
        return kept

    def _after_public(self, state: AutonomyState, events: CycleEvents, now: float) -> None:
        self._rest_on_limits(state, events, self.clock())
        for event in events.public:
            if event["status"] == "ok":
                where = (event.get("result") or {}).get("url") or ""
                self.notify(
                    "public", f"autonomy {event['action']} sent (score {event['score']:.2f}) {where}".strip()
                )
            elif event.get("error") in ("kill_switch", "circuit_open") and state.pause is None:
                reason = str(event["error"])
                detail = f"the router answered {reason} to {event['action']}"
                wait = pause_seconds(event, now)
                state.pause = Pause(reason, now, now + wait, detail)
                self.notify("pause", f"autonomy paused: {detail}; next try after {wait / 60:.0f} min")

    def _rest_on_limits(self, state: AutonomyState, events: CycleEvents, now: float) -> None:
        """Every public write refused by a bound that says when to retry: rest until the earliest."""
        if state.pause is not None or not events.public:
            return
        if any(e["status"] == "ok" or e.get("error") not in RESTING_ERRORS for e in events.public):
            return
        waits = [(pause_seconds(e, now), str(e["error"])) for e in events.public]
        wait, reason = min(waits)
        until = now + wait
        refusals = ", ".join(sorted({f"{e['action']}: {e['error']}" for e in events.public}))
        detail = f"every public write was refused ({refusals}); no LLM call until {stamp(until)}"
        state.pause = Pause(reason, now, until, detail)
        self.notify("pause", f"autonomy paused: {detail}")

    def _beat(self, state: AutonomyState, action: str, now: float) -> None:
        previous = self.files.last_heartbeat()
        started = previous.action_started_at if previous and previous.current_action == action else now
        self.files.beat(
            Heartbeat(
                now, action, started, state.cycle_count, state.last_cycle_at, self.settings.cycle_interval
            )
        )


def _meter(llm: object) -> tuple[int, int, float]:
    if isinstance(llm, MeteredLLM):
        return llm.calls, llm.tokens, llm.usd
    return 0, 0, 0.0

