"""The owner's own words that choose a sink: "answer my mentions".

A reply the agent writes in a turn that read its notifications is its own words in a tainted turn,
so it would wait for the owner's approval; then "answer my mentions" could never be done unasked.
As in CaMeL, the owner's message itself is the capability: when the owner's message of this turn
asks to answer (reply to, respond to) their mentions, the loop code lists the mentions this turn
read on the platforms named (`Origin.answers`, one `platform post` each: never a direct message),
and the router lets a reply to one of them go out with no approval when nothing else in it was
chosen by someone else (`router.policy.whose_words.mention_reply`). The owner's words choose the
destination (the mentions they asked to answer); the rules on what the reply carries still hold.

Only this narrow capability: a new post, a reply to another post, a like, a follow, a delete or a
direct message still waits, and so does a reply that carries owner-only data, a link or a handle
the owner did not write, or words that read as an order to a model.
"""

from __future__ import annotations

import re

ANY_PLATFORM = "*"
# What people call a platform in a sentence, by SafeClaw's key for it.
PLATFORM_WORDS = {
    "bluesky": "bsky", "bsky": "bsky", "mastodon": "mastodon", "masto": "mastodon", "moltbook": "moltbook",
    "reddit": "reddit", "x": "x", "twitter": "x",
}
_PLATFORM = "|".join(sorted(PLATFORM_WORDS, key=len, reverse=True))
_ASK = re.compile(
    r"\b(?:answer|reply\s+to|respond\s+to)\s+(?:all\s+(?:of\s+)?)?(?:my\s+|the\s+)?"
    r"(?:(?:new|latest|recent|unanswered)\s+)?(?:(?P<before>" + _PLATFORM + r")\s+)?mentions\b"
    r"(?:\s+(?:on|in|from)\s+(?P<after>" + _PLATFORM + r")\b)?",
    re.IGNORECASE,
)
# "don't answer my mentions", "never reply to my mentions", "stop answering...": no capability.
_NOT = re.compile(r"\b(?:don['’]?t|do\s+not|never|stop|no\s+need\s+to|not)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
MENTION_KINDS = frozenset({"mention", "reply"})  # a notification that is someone's public post to the owner


def asked_platforms(message: str) -> frozenset[str]:
    """The platforms whose mentions the owner's message asks to answer (`ANY_PLATFORM` when it names
    none); empty when it does not ask."""
    found: set[str] = set()
    for match in _ASK.finditer(message or ""):
        if _NOT.search(message[: match.start()].rsplit(".", 1)[-1][-40:]):
            continue
        named = match.group("before") or match.group("after")
        found.add(PLATFORM_WORDS[named.casefold()] if named else ANY_PLATFORM)
    return frozenset(found)


def answer_key(platform: str, post: str) -> str:
    """One entry of `Origin.answers`: the platform, a space, the post."""
    return f"{platform} {post}"


def split_answer(entry: str) -> tuple[str, str]:
    platform, _, post = entry.partition(" ")
    return platform, post


def covers(platforms: frozenset[str], platform: str) -> bool:
    return ANY_PLATFORM in platforms or platform in platforms
