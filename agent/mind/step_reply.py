"""Think, for one step: the prompt rendered, the model asked, its reply parsed. When the reply's
actions choose where bytes go after the turn read outside text, and the prompt showed the owner's
private data, the model is asked once more with that data hidden (and the secret-like tokens of
the owner's message masked), and those choices are taken from that answer only
(`agent.flow.private_decision`)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import NamedTuple

from agent.flow.private_decision import DECIDING, chosen_by_outside, shows_private
from agent.flow.sinks import SinkGuard, strings_of
from agent.llm.turn import turn_request
from agent.mind.act import Hands
from agent.mind.private_view import MASKED, without_secret_tokens
from agent.mind.prompt import PromptInputs, render_prompt
from agent.mind.tool_code import Action, ParsedReply, parse_reply
from agent.workspace.bounds import capped_reply
from agent.workspace.snapshot import TurnSnapshot
from protocol.origin import Origin

log = logging.getLogger("safeclaw.agent.loop")


class StepReply(NamedTuple):
    prompt: str  # what the model chose the actions from (`SinkGuard.shown`)
    parsed: ParsedReply


def think(hands: Hands, snapshot: TurnSnapshot, inputs: PromptInputs, origin: Origin,
          max_reply_chars: int) -> StepReply:
    """The step's reply (`LLMError` and `ToolCodeError` pass to the loop)."""
    reply = ask(hands, snapshot, inputs, max_reply_chars)
    if not (reply.parsed.actions and origin.tainted and inputs.outside_author is None
            and not inputs.private_hidden and shows_private(snapshot.memory_index, inputs.history,
                                                             inputs.artifact, inputs.user_message)):
        return reply
    chosen = chosen_by_outside(reply.parsed.actions, guard_of(snapshot, inputs, origin, reply), hands.local)
    if not chosen:
        return reply
    log.info("asking again without private data: %s chose where data goes after reading outside text",
             ", ".join(action.name for action in chosen))
    hidden = replace(inputs, private_hidden=DECIDING, user_message=without_secret_tokens(inputs.user_message))
    again = ask(hands, snapshot, hidden, max_reply_chars)
    # What the owner's words chose stands as first decided (the second view may not show the values
    # it needs); what outside text chose is taken from the second answer only.
    kept = [action for action in reply.parsed.actions if action not in chosen]
    outside = chosen_by_outside(again.parsed.actions, guard_of(snapshot, inputs, origin, again), hands.local)
    decided = [action for action in outside if not masked_in(action)]
    return StepReply(again.prompt, ParsedReply(again.parsed.message or reply.parsed.message, kept + decided))


def masked_in(action: Action) -> bool:
    """A value the second view masked, written back: the owner's own read again, kept as first decided."""
    return any(MASKED in text for _name, text in strings_of(action.params))


def guard_of(snapshot: TurnSnapshot, inputs: PromptInputs, origin: Origin, reply: StepReply) -> SinkGuard:
    return SinkGuard.for_turn(snapshot.memory_index, inputs.history, origin).with_shown(reply.prompt)


def ask(hands: Hands, snapshot: TurnSnapshot, inputs: PromptInputs, max_reply_chars: int) -> StepReply:
    prompt = render_prompt(snapshot, inputs, hands.llm.prompt_budget())
    hands.workspace.write_prompt_cache(prompt)
    hidden = bool(inputs.private_hidden)
    with turn_request(snapshot.request_for(inputs.user_message, inputs.outside_author, hidden)):
        raw = capped_reply(hands.llm.chat(prompt), max_reply_chars)
    return StepReply(prompt, parse_reply(raw, snapshot.schemas))
