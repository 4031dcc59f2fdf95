"""The agent's side of "answer my mentions" (`protocol.mention_replies`): the loop code, never
the model, names the mentions the owner's message of this turn asked to answer, from what this
turn's own notification reads returned, and what those reads hold that is for the owner only.

- `answers`: each mention or reply on a platform the owner named (any, when they named none) that
  a `GET_NOTIFICATIONS` of this turn returned; never a direct message (a public reply to it would
  publish a private exchange), never a like or a follow.
- `private_words`: the words of every notification and direct message the turn read. They are
  the owner's to read (`agent.flow.observed`), so a reply that repeats a run of them, or one of
  their secret-like tokens, carries owner-only data: it waits for the owner like any other
  (`agent.flow.sinks`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.flow.owner_only import Needle, needles_of, squeezed
from protocol.mention_replies import MENTION_KINDS, answer_key, asked_platforms, covers
from protocol.origin import MAX_ANSWERS

READ = "GET_NOTIFICATIONS"
RUN_WORDS = 4  # a reply repeating this many words in a row of a private text carries it
WHERE = "words of your notifications or direct messages"


def _notification_reads(steps: Iterable[Any]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    for step in steps:
        for result in step.get("results", []) if isinstance(step, dict) else []:
            if not isinstance(result, dict) or result.get("action") != READ or result.get("status") != "ok":
                continue
            found = result.get("result")
            params = result.get("params")
            if not isinstance(found, dict) or not isinstance(items := found.get("notifications"), list):
                continue
            platform = found.get("platform") or (params.get("platform") if isinstance(params, dict) else "")
            yield str(platform or ""), [i for i in items if isinstance(i, dict)]


def answers(owner_message: str, steps: Iterable[Any]) -> tuple[str, ...]:
    """The mentions this turn read that the owner's message asked to answer (`Origin.answers`)."""
    platforms = asked_platforms(owner_message)
    if not platforms:
        return ()
    found = []
    for platform, items in _notification_reads(steps):
        if not covers(platforms, platform):
            continue
        for item in items:
            post = item.get("post_id")
            public_mention = item.get("kind") in MENTION_KINDS and not item.get("private")
            if public_mention and isinstance(post, str) and post:
                found.append(answer_key(platform, post))
    return tuple(dict.fromkeys(found))[:MAX_ANSWERS]


def private_words(steps: Iterable[Any]) -> list[Needle]:
    """The owner-only values of the notifications and direct messages this turn read: each
    secret-like token, each run of `RUN_WORDS` words and each whole text."""
    needles: list[Needle] = []
    for _, items in _notification_reads(steps):
        for item in items:
            text = item.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            needles += needles_of(text, WHERE, whole=True)
            words = [w for w in (squeezed(w) for w in text.split()) if w]
            for start in range(max(0, len(words) - RUN_WORDS + 1)):
                run = "".join(words[start : start + RUN_WORDS])
                needles.append(Needle(run, WHERE, any(c.isdigit() for c in run)))
    return needles
