"""Whose turn it is and what it has read: the origin the loop code (never the model) states for
each router command (`protocol.origin`), and the taint a conversation carries.

A turn is tainted from the moment its prompt shows text someone other than the owner wrote: a
web page, a fetched or searched post, a feed, notifications, a mention, a forwarded message. The
results of the owner's own writes (a post's URL, "liked") and the owner's own messages do not
taint. What a turn read is kept with it in the conversation's history, so the taint lasts as long
as that text can reach a prompt: until the turn leaves the history or the owner clears it
(/clear); a fact stored after reading taints every prompt that shows it, in any conversation,
until the owner forgets it or says it again in their own words. Fresh words the owner types are
never tainted: a write whose every published field is already in the owner's own messages needs
no approval (the router checks this).

The origin is a value: the loop passes it with each router call (`RouterPort.call(origin=…)`),
wrappers in between (autonomy's gate) pass it on unchanged, and a reader that sends many commands
for one request (the explainer) is handed a port bound to it (`Speaking`). A command sent without
one counts as tainted at the router.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from agent.flow.labels import label_of
from agent.flow.observed import OWN_LOCAL_ACTIONS as OWN_LOCAL_ACTIONS
from agent.flow.observed import others_words
from agent.workspace.memory import one_line, source_of, visible_to
from agent.workspace.memory_index import MemoryIndex
from protocol.origin import AUTONOMY, OWNER, STRANGER, Origin, bounded_words, clip

# The local actions a turn someone else wrote may run: never the browser (memory refuses itself).
OUTSIDE_TURN_LOCAL_ACTIONS = frozenset(
    {"_LLM_SUMMARY", "_MEMORY_WRITE", "_MEMORY_FORGET", "_RECORD_VIOLATION", "_NOTE_UNKNOWN", "_PROPOSE_RULE"}
)
TARGET_PARAMS = ("url", "uri", "post_id", "query", "submolt", "content", "platform")  # what it read
READ_KEY = "read"  # a history turn's list of the outside sources it read
_VIA = re.compile(r"[^a-z0-9_-]")



class _Router(Protocol):
    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "",
        origin: Origin | None = None,
    ) -> dict[str, Any]: ...


class Speaking:
    """A router port whose every command carries one origin, fixed where the port is made: the
    explainer's reads are the owner's request about one post (`explain_origin`), whatever the
    reader's code between asks."""

    def __init__(self, router: _Router, origin: Origin) -> None:
        self.router = router
        self.origin = origin

    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = ""
    ) -> dict[str, Any]:
        return self.router.call(action, params, conversation, intent, origin=self.origin)


def via_of(conversation: str) -> str:
    """The path a conversation's messages come by: its name's first part (console, telegram…)."""
    via = _VIA.sub("", conversation.split(":", 1)[0].lower())[:32]
    return via if via and via[0].isalpha() else "other"


def turn_source(
    conversation: str, outside_author: str | None, autonomy_author: str = "", hold_autonomy: bool = False
) -> Origin:
    """Who wrote a turn, when the channel said no more than the conversation and the author."""
    if outside_author is None:
        return Origin(OWNER, via_of(conversation))
    if conversation == "autonomy" or (autonomy_author and outside_author == autonomy_author):
        return Origin(AUTONOMY, "autonomy", author=clip(outside_author, 300), platform="moltbook",
                      hold_writes=hold_autonomy)
    via = "mention" if via_of(conversation) in ("bluesky", "bsky") else "forward"
    return Origin(STRANGER, via, author=clip(one_line(outside_author), 300))


def result_label(result: dict[str, Any]) -> str:
    params = result.get("params")
    params = params if isinstance(params, dict) else {}
    target = next((str(params[k])[:200] for k in TARGET_PARAMS if isinstance(params.get(k), str)), "")
    private = " (with direct messages: private)" if holds_direct_messages(result) else ""
    return clip(f"{result.get('action')} {target}".strip() + private, 300)


def holds_direct_messages(result: dict[str, Any]) -> bool:
    found = result.get("result")
    items = found.get("notifications") if isinstance(found, dict) else None
    return isinstance(items, list) and any(isinstance(i, dict) and i.get("private") for i in items)


def others_words_in(result: Any) -> bool:
    """Whether an action's result put someone else's words in front of the model: its label says
    (`agent.flow.observed`); an observation kept before labels, or with an unreadable one, is
    judged by the router's flag and the action (fail closed)."""
    if not isinstance(result, dict) or result.get("status") != "ok":
        return False  # a refusal, an error or a held write: the router's words, no one else's
    label = label_of(result)
    if label is not None:
        return bool(label.outside)
    return others_words(result)


def sources_read(steps: list[Any]) -> list[str]:
    """The outside sources a turn's steps read, in order, each once."""
    found: list[str] = []
    for step in steps:
        for result in step.get("results", []) if isinstance(step, dict) else []:
            if others_words_in(result):
                label = result_label(result)
                if label not in found:
                    found.append(label)
    return found


def conversation_taint(
    artifact: dict[str, Any], conversation: str, history: list[dict[str, Any]] | None = None
) -> list[str]:
    """What outside text the conversation's prompt can show: messages someone else wrote in its
    history, what earlier turns read, and what the last artifact of this conversation holds."""
    sources: list[str] = []
    for turn in history or []:
        if turn.get("outside_author"):
            sources.append(f"a message from {one_line(str(turn['outside_author']))[:200]}")
        read = turn.get(READ_KEY)
        if isinstance(read, list):
            sources += [clip(str(s), 300) for s in read]
    if artifact.get("conversation") == conversation:
        sources += sources_read(artifact.get("steps", []))
    return list(dict.fromkeys(sources))


def memory_taint(memory: dict[str, Any] | MemoryIndex, outside_author: str | None = None) -> list[str]:
    """The facts from outside that a turn's prompt shows (fenced, with their source): a fact the
    model stored after reading a page is that page's text in every later prompt, in any
    conversation, long after the page left the history and the artifact. (Indexed memory: found
    once per index.)"""
    if isinstance(memory, MemoryIndex):
        visible = memory if outside_author is None else memory.public()
        taint: list[str] = visible.derived("taint", lambda index: memory_taint(index.memory))
        return list(taint)
    return [
        clip(f"the remembered '{one_line(str(key))[:80]}' ({source})", 300)
        for key, entry in visible_to(memory, outside_author).items()
        if (source := source_of(entry)) is not None
    ]


def owner_messages(history: list[dict[str, Any]], current: str | None) -> tuple[str, ...]:
    """The owner's own words a turn may publish without approval: the owner's messages in the
    history (never a forward, never a notice) and the message being answered, if the owner's."""
    said = [str(t.get("user", "")) for t in history if not t.get("outside_author") and not t.get("notice")]
    if current is not None:
        said.append(current)
    return bounded_words(said)


def explain_origin(address: str) -> Origin:
    """The origin of the explainer's commands (the owner asked; they read the post and searches):
    reads only, and a write one asked for would wait for the owner."""
    address = clip(address.strip(), 200)
    return Origin(OWNER, "explain", owner_words=(f"/explain {address}",),
                  taint=(f"the post {address} and the posts /explain searched",))
