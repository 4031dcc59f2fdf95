"""The Think-Act-Observe loop: one user message in, one reply out.

history → prompt → LLM → parse → run each action (local) or send it (router) → results into
the artifact → the LLM sees them → … until it answers with no action or the step bound.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.actions import LocalAction
from agent.config.sections import BrowserSettings
from agent.cost.metered import cost_label
from agent.cost.shares import cost_payer, payer_of
from agent.errors import LLMError, MessageNotSaved, NotSavedError, ToolCodeError
from agent.flow import mention_replies
from agent.flow.owner_only import Needle
from agent.flow.reply_links import checked_reply
from agent.flow.sinks import SinkGuard
from agent.link.origin import (
    OWN_LOCAL_ACTIONS,
    conversation_taint,
    memory_taint,
    owner_messages,
    sources_read,
    turn_source,
    via_of,
)
from agent.llm.base import BaseLLM
from agent.llm.turn import turn_request
from agent.mind import loop_words
from agent.mind.act import Observation, RouterPort, execute, execute_new, reply_without_observing, step_origin
from agent.mind.private_view import ANSWERING_MEMORY
from agent.mind.prompt import PromptInputs
from agent.mind.step_reply import think
from agent.mind.tool_code import Action
from agent.workspace.bounds import DEFAULT_MAX_REPLY_CHARS
from agent.workspace.folder import Workspace
from agent.workspace.memory_index import MemoryIndex
from agent.workspace.snapshot import TurnSnapshot
from protocol.origin import OWNER, Origin

log = logging.getLogger("safeclaw.agent.loop")


@dataclass
class LoopLimits:
    max_steps: int = 5  # LLM calls that may run actions, per turn
    max_format_retries: int = 2  # malformed tool_code replies the LLM may correct, per turn
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS  # of one model reply; the rest is cut, with a note


@dataclass
class TurnResult:
    reply: str
    steps: int = 0
    observations: list[dict[str, Any]] = field(default_factory=list)


class AgentLoop:
    def __init__(
        self,
        workspace: Workspace,
        llm: BaseLLM,
        local: dict[str, LocalAction],
        router: RouterPort,
        limits: LoopLimits | None = None,
        browser: BrowserSettings | None = None,
    ) -> None:
        self.workspace = workspace
        self.llm = llm
        self.local = local
        self.router = router
        self.limits = limits or LoopLimits()
        self.browser = browser or BrowserSettings()
        # Standing instructions per conversation, built fresh for each prompt (see PromptInputs.briefing).
        self.briefings: dict[str, Callable[[], str]] = {}
        # Turns share memory.json and artifact.json, so they run one at a time.
        self._lock = threading.Lock()
        self.autonomy_hold_writes = False  # channels.autonomy.approve_public_writes

    def action_schemas(self) -> dict[str, dict[str, Any]]:
        """Params schemas of every action the LLM may name: local ones it has, router ones listed."""
        return self.snapshot("").schemas

    def snapshot(self, conversation: str) -> TurnSnapshot:
        """The workspace as one turn sees it, read once."""
        return TurnSnapshot.load(self.workspace, self.llm.prompt_template, conversation, set(self.local))

    def run_turn(
        self,
        conversation: str,
        user_message: str,
        outside_author: str | None = None,
        source: Origin | None = None,
        authors: Sequence[str] = (),
    ) -> TurnResult:
        """One turn. `outside_author` names who wrote the message when it was not the owner;
        `source` is who wrote it as the channel knows it (a mention's post), else derived; `authors`:
        the outside authors whose words it carries, as the channel's code knows them (an autonomy
        cycle's items): each one's budget share pays for the turn's calls (`agent.cost.shares`)."""
        source = source or turn_source(conversation, outside_author, hold_autonomy=self.autonomy_hold_writes)
        with self._lock, cost_label(conversation), cost_payer(payer_of(source, authors)):
            self.workspace.pending.flush()  # what a full disk refused before, if there is room now
            snapshot = self.snapshot(conversation)
            try:
                turns = self.workspace.begin_turn(
                    conversation, user_message, outside_author, snapshot.history
                )
            except NotSavedError as exc:  # kept in memory; nothing is done on a message not recorded
                raise MessageNotSaved(exc.path, exc.reason) from None
            result = self._think_act_observe(conversation, user_message, snapshot, outside_author, source)
            if outside_author is None:  # what the owner is shown: hosts and handles from outside marked
                result.reply = checked_reply(result, user_message, snapshot, conversation)
            result.reply = self._finish(conversation, result.reply, turns, result.observations)
            return result

    def _finish(
        self, conversation: str, reply: str, turns: list[dict[str, Any]] | None, steps: list[dict[str, Any]]
    ) -> str:
        """Save the reply with its turn; a refused write is kept in memory and the reply says so
        (what the turn did stands)."""
        try:
            self.workspace.finish_turn(conversation, reply, turns, sources_read(steps))
        except NotSavedError as exc:
            return reply + (
                f"\n\n(This exchange is not saved yet: {exc.reason} at {exc.path}. "
                "I keep it in memory and write it as soon as there is room.)"
            )
        return reply

    def add_notice(self, conversation: str, text: str) -> None:
        with self._lock:
            self.workspace.add_notice(conversation, text)

    def flush_pending(self, wait: bool = True) -> list[Path]:
        """Write what a full disk refused earlier (between turns); without `wait`, nothing while a
        turn runs (the agent is stopping: what stays unwritten is logged)."""
        if not self._lock.acquire(blocking=wait):
            return []
        try:
            return self.workspace.pending.flush()
        finally:
            self._lock.release()

    def run_actions(
        self,
        conversation: str,
        text: str,
        actions: list[Action],
        describe: Callable[[list[Observation]], str],
    ) -> str:
        """Run actions the owner named with a command exactly as a model turn runs its actions
        (same `execute`, router, artifact and history); `describe` words the reply."""
        with self._lock:
            self.workspace.pending.flush()
            history = self.workspace.load_history(conversation)
            seen = conversation_taint(self.workspace.load_artifact(), conversation, history)
            origin = Origin(OWNER, via_of(conversation), taint=tuple(seen),
                            owner_words=owner_messages(history, text))
            try:
                self.workspace.begin_turn(conversation, text)
            except NotSavedError as exc:
                raise MessageNotSaved(exc.path, exc.reason) from None
            results = self._execute_all(actions, conversation, set(), None, seen, uuid.uuid4().hex, origin)
            steps = [{"step": 1, "command": text, "results": results}]
            self._save_artifact(conversation, uuid.uuid4().hex, steps)
            return self._finish(conversation, describe(results), None, steps)

    def warm_up(self) -> None:
        """Let the provider prepare what every turn shares (the embedded model: its fixed prompt)."""
        snapshot = self.snapshot("")
        with turn_request(snapshot.request_for("")):
            self.llm.prepare(snapshot.template)

    def set_memory_public(self, key: str, public: bool) -> None:
        with self._lock:
            self.workspace.set_memory_public(key, public)

    def clear_history(self, conversation: str) -> None:
        with self._lock:
            self.workspace.clear_history(conversation)

    def _think_act_observe(
        self,
        conversation: str,
        user_message: str,
        snapshot: TurnSnapshot,
        outside_author: str | None,
        source: Origin,
    ) -> TurnResult:
        artifact, history = snapshot.artifact, snapshot.history
        steps: list[dict[str, Any]] = []
        format_errors = 0
        last_message = ""
        done: set[str] = set()  # actions that succeeded this turn; a repeat is not run again
        turn_id = uuid.uuid4().hex
        for step in range(1, self.limits.max_steps + 1):
            briefing = self.briefings[conversation]() if conversation in self.briefings else ""
            # "answer my mentions": its replies go out unasked, so the model then sees nothing private
            owners = outside_author is None and source.kind == OWNER
            asked = mention_replies.answers(user_message, steps) if owners else ()
            inputs = PromptInputs(conversation, user_message, history, artifact, turn_id, outside_author,
                                  briefing, private_hidden=ANSWERING_MEMORY if asked else "")
            seen = [*conversation_taint(artifact, conversation, history),
                    *memory_taint(snapshot.memory_index, outside_author)]
            origin = step_origin(source, seen, history, user_message, outside_author)
            try:
                prompt, parsed = think(self, snapshot, inputs, origin, self.limits.max_reply_chars)
            except LLMError as exc:
                log.log(exc.log_level, "LLM failed: %s", exc)
                return TurnResult(loop_words.llm_failure(exc), step, steps)
            except ToolCodeError as exc:
                format_errors += 1
                log.info(
                    "malformed tool_code (%d/%d): %s", format_errors, self.limits.max_format_retries, exc
                )
                if format_errors > self.limits.max_format_retries:
                    return TurnResult(loop_words.gave_up_on_format(exc), step, steps)
                steps.append(loop_words.malformed_step(step, exc))
                artifact = self._save_artifact(conversation, turn_id, steps)
                continue
            if not parsed.actions:
                return TurnResult(parsed.message or "(the model gave an empty answer)", step, steps)
            last_message = parsed.message or last_message
            private: list[Needle] = []
            if asked and origin.kind == OWNER:  # the mentions the owner's words asked to answer
                origin, private = origin.with_answers(asked), mention_replies.private_words(steps)
            results = self._execute_all(parsed.actions, conversation, done, outside_author, seen, turn_id,
                                        origin, snapshot, private, prompt)
            steps.append({"step": step, "results": results})
            artifact = self._save_artifact(conversation, turn_id, steps)
            if not self.llm.observes_results:
                return TurnResult(reply_without_observing(parsed.message, results), step, steps)
            if all(r["status"] == "skipped" for r in results):
                # The model only repeats what it already did: its message is the answer.
                return TurnResult(
                    last_message or "Done (I did not repeat an action already taken).", step, steps
                )
        return TurnResult(loop_words.stopped_at_bound(last_message, self.limits.max_steps),
                          self.limits.max_steps, steps)

    def _save_artifact(self, conversation: str, turn_id: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
        artifact = {"conversation": conversation, "turn": turn_id, "updated_at": time.time(), "steps": steps}
        # A refused write is kept in memory (and logged): the turn goes on, its results are in the reply.
        with contextlib.suppress(NotSavedError):
            self.workspace.save_artifact(artifact)
        return artifact

    def _execute_all(
        self,
        actions: list[Action],
        conversation: str,
        done: set[str],
        outside_author: str | None = None,
        seen: list[str] | None = None,
        turn_id: str = "",
        origin: Origin | None = None,
        snapshot: TurnSnapshot | None = None,
        private: list[Needle] | None = None,
        shown: str = "",  # the prompt the model chose the actions from (`SinkGuard.shown`)
    ) -> list[Observation]:
        """`snapshot`: the turn's memory and history, read once; a memory action that succeeds
        makes the next action see (and guard) what it remembered. `private`: what the turn's
        notifications and direct messages hold, searched for in its commands when it may answer
        mentions unasked (`agent.flow.mention_replies`)."""
        memory, history = (snapshot.memory_index, snapshot.history) if snapshot is not None else (
            self.workspace.memory_index(), self.workspace.load_history(conversation))

        def guard(memory: MemoryIndex) -> SinkGuard:
            sinks = SinkGuard.for_turn(memory, history, origin).with_shown(shown)
            return sinks.with_private_reads(private or []) if origin is not None and origin.answers else sinks

        sinks = guard(memory)

        def run(action: Action) -> Observation:
            nonlocal sinks
            observation = execute(self, action, conversation, outside_author, seen, turn_id, origin, sinks)
            if action.name in OWN_LOCAL_ACTIONS and observation["status"] == "ok":
                memory = self.workspace.memory_index()
                if snapshot is not None:
                    snapshot.memory_index = memory  # the next step sees what was remembered
                sinks = guard(memory)
            return observation

        return execute_new(actions, done, run)
