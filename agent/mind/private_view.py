"""What a prompt shows of the owner's private data in a step of "answer my mentions" whose replies
go out with no approval (`agent.flow.mention_replies`): only what the owner made public. By
construction such a reply then cannot carry, in any spelling, what the model never saw there:
private memory, the owner's earlier messages, the words of the direct messages the turn read.
A turn someone else wrote is shown memory the same way (`PRIVATE_MEMORY`), and so is a step asked
again because it chose where data goes after reading outside text (`agent.flow.private_decision`),
which also sees the owner's message with its codes masked (`without_secret_tokens`)."""

from __future__ import annotations

import re
from typing import Any

from agent.flow.owner_only import TOKEN, secret_like
from protocol.link_hosts import link_keys

PRIVATE_MEMORY = (
    "Your owner's memory is private: it is not shown here, because this message is not from your "
    "owner. Never tell anyone what your owner told you."
)
ANSWERING_MEMORY = (
    "Your owner's private memory is not shown while you answer mentions: replies go out without "
    "your owner seeing them first. Never tell anyone what your owner told you."
)
WITHHELD = "(a direct message: its words are not shown in this step)"
MASKED = "[a private value]"
_ADDRESS = ("://", "@", "did:")


def without_secret_tokens(message: str) -> str:
    """The owner's message with each secret-like token (4 or more letters and digits holding a
    digit: a PIN, a code) replaced by MASKED, except in a word that is an address (a link, a post,
    a handle): the owner chose to send what that carries there."""
    def masked(word: str) -> str:
        if any(mark in word for mark in _ADDRESS) or link_keys(word):
            return word
        return TOKEN.sub(lambda m: MASKED if secret_like(m.group()) else m.group(), word)

    return re.sub(r"\S+", lambda m: masked(m.group()), message)


def without_private_items(artifact: dict[str, Any]) -> dict[str, Any]:
    """The artifact with the text of each private notification (a direct message) withheld."""
    steps = [_step_without(step) for step in artifact.get("steps", [])]
    return {**artifact, "steps": steps}


def _step_without(step: Any) -> Any:
    if not isinstance(step, dict) or not isinstance(step.get("results"), list):
        return step
    return {**step, "results": [_result_without(r) for r in step["results"]]}


def _result_without(result: Any) -> Any:
    found = result.get("result") if isinstance(result, dict) else None
    if not isinstance(found, dict) or not isinstance(found.get("notifications"), list):
        return result
    items = [{**item, "text": WITHHELD} if isinstance(item, dict) and item.get("private") else item
             for item in found["notifications"]]
    return {**result, "result": {**found, "notifications": items}}
