"""The owner's reply of a turn that read outside text: its links and handles are checked as links.

A post, a notification or a page the turn read can plant a bare domain or a look-alike handle
("safeclaw-help.example", "@safeclaw-support.bsky.social") that a model obeying it repeats in its
answer. Every host and handle in the reply that the owner did not write in this conversation is shown
marked as outside and unlinked, as the explainer shows its own (`agent.flow.outside_links`); links
on bsky.app (a post's own page) stay as they are. A turn that read nothing from outside is left alone.
"""

from __future__ import annotations

from typing import Any, Protocol

from agent.commands.describe import OUTBOX_FILE
from agent.flow.outside_links import WITHHELD_LINE, OutsideLinks
from agent.link.origin import conversation_taint, owner_messages, sources_read
from agent.workspace.snapshot import TurnSnapshot

POST_PAGES = "bsky.app"  # a post's own page: its links are the platform's, not a lure
# Names SafeClaw's own words give that read like hosts: a file of the router's (.jsonl is no domain).
OWN_NAMES = (OUTBOX_FILE,)


class Answered(Protocol):
    reply: str
    observations: list[dict[str, Any]]  # the turn's steps, each with its results


def checked_reply(turn: Answered, user_message: str, snapshot: TurnSnapshot, conversation: str) -> str:
    """The turn's reply as the owner is shown it: marked when this turn or its conversation (the
    snapshot's history and last artifact) read outside text."""
    earlier = conversation_taint(snapshot.artifact, conversation, snapshot.history)
    if not (sources_read(turn.observations) or earlier):
        return turn.reply
    said = owner_messages(snapshot.history, user_message)
    links = OutsideLinks.for_explain([*said, POST_PAGES, *OWN_NAMES], "")
    return "\n".join(links.mark(line, WITHHELD_LINE)[0] for line in turn.reply.split("\n"))
