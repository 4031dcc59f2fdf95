"""Where a step sends bytes it chose after reading both outside text and the owner's private data.

A page or a post can list many addresses, one for each value a secret may take (`/bt/A`, `/bt/B`,
`/bt/AB`), or many handles: each is in the prompt as the text wrote it, so the address check
(`SinkGuard.address_refusal`) lets any of them through, and a model that saw the owner's memory can
pick the one that spells the secret. No check of the bytes can tell that choice from an ordinary
one: the bytes are the page's own. So when a step that read outside text was shown private data
and chose such a read (a URL, a post's address, a search query, a community's name) that the
owner did not name in their own words, the loop asks the model again with the private data
hidden (`DECIDING`) and takes those choices from that answer only: a choice made without the
secret cannot carry it (what the owner's words chose stands as first decided). The owner's message
of this turn stays shown (what the owner writes to the agent now is what it works on), its
secret-like tokens masked; the owner's other private words in it are the residual
`docs/whose_words.md` names. It costs one more model call, in such a step only. A public write is
not asked again: in such a turn it waits for the owner, who sees what it chose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.flow.sinks import NAMED_WHOLE, RESOLVED_FIELDS, SinkGuard, strings_of
from agent.mind.private_view import without_private_items, without_secret_tokens
from agent.mind.tool_code import Action
from agent.workspace.memory_index import MemoryIndex
from protocol.skill_words import VERBS

# A router command's params whose bytes are sent to be looked up.
LOOKED_UP = RESOLVED_FIELDS | NAMED_WHOLE
# A public write of a turn that read outside text waits for the owner, who sees what it chose.
PUBLIC_WRITE_VERBS = {"post", "reply", "like", "delete"}
DECIDING = (
    "Your owner's private memory, earlier messages and codes are not shown in this step: it chooses "
    "what to open or look up after reading outside text, and such a choice must not depend on them. "
    "Never tell anyone what your owner told you."
)


def shows_private(memory: MemoryIndex, history: list[dict[str, Any]], artifact: dict[str, Any],
                  message: str = "") -> bool:
    """Whether a full view of the turn shows data for the owner only: a memory entry not made
    public, an earlier message of the owner's, a direct message the turn read, a secret-like token
    of the owner's message (a PIN, a code)."""
    owners = any(not turn.get("outside_author") for turn in history)
    direct = without_private_items(artifact).get("steps", []) != artifact.get("steps", [])
    told = without_secret_tokens(message) != message
    return len(memory.public()) < len(memory) or owners or direct or told


def chosen_by_outside(actions: Iterable[Action], guard: SinkGuard, local: Iterable[str]) -> list[Action]:
    """The reads that send bytes to a destination, or bytes to look up, the owner did not write:
    a URL the browser opens (its host, or a path other than the site's root), a post's address (its
    names are resolved, its path is sent), a search query, a community's name."""
    local_names = set(local)
    chosen = []
    for action in actions:
        if VERBS.get(action.name) in PUBLIC_WRITE_VERBS:  # a turn that read outside text: it waits
            continue
        if any(_not_owners(action.name in local_names, name, text, guard)
               for name, text in strings_of(action.params)):
            chosen.append(action)
    return chosen


def _not_owners(local: bool, name: str, text: str, guard: SinkGuard) -> bool:
    if local:
        if name != "url":
            return False
        return not guard.owner_chose(text)
    return name in LOOKED_UP and not guard.owner_wrote(text.strip())
