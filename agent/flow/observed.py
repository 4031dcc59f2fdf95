"""The label of what an action showed the model (`agent.flow.labels`), kept with its observation
in the artifact: whose words (the owner's or the agent's own, or the outside source it read) and
who may read it (notifications and direct messages: the owner only)."""

from __future__ import annotations

from typing import Any

from agent.flow.labels import AGENT_TAINTED, OWNER_ONLY, PUBLIC, Label, outside, owners
from protocol.replies import OTHERS_WORDS

# Local actions whose results hold no one else's words (the rest may: pages, summaries of them).
OWN_LOCAL_ACTIONS = frozenset(
    {"_MEMORY_WRITE", "_MEMORY_FORGET", "_RECORD_VIOLATION", "_NOTE_UNKNOWN", "_PROPOSE_RULE"}
)
ROUTER_FLAG = OTHERS_WORDS  # the router's word on a read (`Reply.others_words`); a label replaces it


def others_words(observation: dict[str, Any]) -> bool:
    """Whether the result put someone else's words in front of the model: a router read that says
    so (or says nothing: fail closed), a local action that is not the owner's own."""
    action = str(observation.get("action", ""))
    if action.startswith("_"):
        return action not in OWN_LOCAL_ACTIONS
    return observation.get(ROUTER_FLAG) is not False


def owner_only(observation: dict[str, Any]) -> bool:
    """Notifications (mentions, direct messages) and anything marked private are the owner's to read."""
    found = observation.get("result")
    if not isinstance(found, dict):
        return False
    items = found.get("notifications")
    return isinstance(items, list) or bool(found.get("private"))


def labelled(observation: dict[str, Any], source: str, tainted: bool) -> dict[str, Any]:
    """The observation with its label in place of the router's flag. `source` names what was read
    (the label's outside words); `tainted`: the turn had read outside text before this action."""
    readers = OWNER_ONLY if owner_only(observation) else PUBLIC
    label: Label
    if others_words(observation):
        label = outside([source], readers)
    elif tainted:
        label = Label(frozenset({AGENT_TAINTED}), readers)
    else:
        label = owners(readers)
    kept = {k: v for k, v in observation.items() if k != ROUTER_FLAG}
    return {**kept, "label": label.to_dict()}
