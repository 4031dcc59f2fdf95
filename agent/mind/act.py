"""Act: what one step's actions do. A local action runs in this process; any other is sent to the
router with its intent key. A failure is an observation, never a crash; an action that already
succeeded this turn is not run again."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from agent.actions import ActionContext, LocalAction
from agent.commands.describe import describe_one
from agent.config.sections import BrowserSettings
from agent.errors import AgentError
from agent.flow.observed import labelled
from agent.flow.sinks import SinkGuard
from agent.link.origin import OUTSIDE_TURN_LOCAL_ACTIONS, owner_messages, result_label
from agent.llm.base import BaseLLM
from agent.mind.tool_code import Action
from agent.workspace.folder import Workspace
from protocol.commands import intent_key
from protocol.origin import NO_ORIGIN, OWNER, Origin

log = logging.getLogger("safeclaw.agent.loop")
Observation = dict[str, Any]


class RouterPort(Protocol):
    """How the loop reaches the router: `agent.link.router_client.RouterClient` or `NoRouter`.
    `origin`: whose words the command is and what its turn read, stated by loop code (none sent:
    the router counts it tainted)."""

    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "",
        origin: Origin | None = None,
    ) -> dict[str, Any]: ...


class Hands(Protocol):
    """What actions run with (the loop holds them; a test may swap one)."""

    workspace: Workspace
    llm: BaseLLM
    local: dict[str, LocalAction]
    router: RouterPort
    browser: BrowserSettings


def execute(
    hands: Hands,
    action: Action,
    conversation: str,
    outside_author: str | None = None,
    seen: list[str] | None = None,
    turn_id: str = "",
    origin: Origin | None = None,
    sinks: SinkGuard | None = None,
) -> Observation:
    """Run one action and return its observation. A router action carries its intent key (turn,
    action, params): the router answers a repeat of it from the first one's record instead of acting
    twice.

    `outside_author`: who wrote the turn if not the owner; `seen`: the outside data its prompt
    showed; `origin`: what the router is told about both (none sent: the router counts it tainted);
    `sinks`: the turn's owner-only data (read from the workspace when not given)."""
    base = {"action": action.name, "params": action.params}
    written_by_other = outside_author is not None or (origin is not None and origin.kind != OWNER)
    if action.name in hands.local and written_by_other and action.name not in OUTSIDE_TURN_LOCAL_ACTIONS:
        return {**base, "status": "denied", "error": "not_for_a_stranger",
                "message": f"{action.name} was not run: a turn someone else wrote cannot use it"}
    workspace = hands.workspace
    if sinks is None:
        sinks = SinkGuard.for_turn(workspace.memory_index(), workspace.load_history(conversation), origin)
    if action.name in hands.local:
        owner_words = origin.owner_words if origin is not None else ()
        ctx = ActionContext(hands.workspace, hands.llm, conversation, hands.browser, outside_author,
                            list(seen or []), owner_words, sinks)
        return _labelled({**base, **run_local(action, hands.local[action.name], ctx)}, origin, seen)
    intent = intent_key(turn_id, action.name, action.params) if turn_id else ""
    holds = sinks.holds(action.params)
    if holds:  # the router refuses it (a read of a tainted turn) or holds it for the owner (a write)
        origin = (origin or Origin(OWNER, "other", taint=(NO_ORIGIN,))).with_holds(holds)
    reply = hands.router.call(action.name, action.params, conversation, intent, origin=origin)
    # Only what an observation holds: a router reply cannot add keys the loop acts on.
    kept = {k: v for k, v in reply.items() if k not in base and k not in ("follow_up", "label")}
    return _labelled({**base, **kept}, origin, seen)


def _labelled(observation: Observation, origin: Origin | None, seen: list[str] | None) -> Observation:
    tainted = bool(seen) or origin is None or origin.tainted
    return labelled(observation, result_label(observation), tainted)


def run_local(action: Action, run: LocalAction, ctx: ActionContext) -> Observation:
    try:
        result = run(action.params, ctx)
    except AgentError as exc:
        return {"status": "error", "message": str(exc)}
    except Exception as exc:  # an action's bug must not end the turn
        log.exception("local action %s crashed", action.name)
        return {"status": "error", "message": f"{action.name} failed: {type(exc).__name__}"}
    return {"status": "ok", "result": result}


def execute_new(
    actions: list[Action], done: set[str], run: Callable[[Action], Observation]
) -> list[Observation]:
    """Run each action not already done this turn (`done` holds their keys and grows): a repeat is
    answered as skipped. What succeeded, may have happened or waits for approval counts as done."""
    results: list[Observation] = []
    for action in actions:
        key = json.dumps([action.name, action.params], sort_keys=True)
        if key in done:
            results.append({"action": action.name, "params": action.params, "status": "skipped",
                            "message": "already done earlier in this turn (result above); not repeated"})
            continue
        observation = run(action)
        if observation.get("status") in ("ok", "unknown", "pending_approval"):
            done.add(key)
        results.append(observation)
    return results


def step_origin(
    source: Origin,
    seen: list[str],
    history: list[dict[str, Any]],
    message: str,
    outside_author: str | None,
) -> Origin:
    """The origin of a step's commands: who wrote the turn, what it had read before them, and the
    words the owner (and the person answered) wrote."""
    if source.kind == OWNER:
        own = owner_messages(history, message)
        return Origin(**{**source.__dict__, "owner_words": own}).with_reading(seen)
    own = owner_messages(history, None)
    written_by = f"a message from {outside_author or source.author or 'someone else'}"
    return Origin(
        **{**source.__dict__, "owner_words": own, "author_words": (message[:8000],)}
    ).with_reading([written_by, *seen])


def reply_without_observing(message: str, results: list[Observation]) -> str:
    """The model will not read the results, so each action's outcome is said once, from the results:
    what failed, waits for the owner or is not known yet first, then what went through. The model's
    words were written before anything ran ("Posting on Bluesky: …", "Forgetting cat.") and would
    say it twice, or say the opposite of what happened, so they are left out."""
    unsettled = [describe_one(r) for r in results if r["status"] not in ("ok", "skipped")]
    settled = [describe_one(r) for r in results if r["status"] == "ok"]
    return "\n".join([*unsettled, *settled]) or message or "Done."
