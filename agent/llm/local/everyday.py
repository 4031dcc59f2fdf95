"""Everyday asks a newcomer tries first that no action does: the time, a reminder, a post's words
given without quotes. Each gets a plain answer written here, never an action guessed at."""

from __future__ import annotations

import re
from datetime import datetime

from protocol.model_markup import neutralise

CLOCK = re.compile(
    r"^\W*(what(?:'s| is) the (time|date|day)( today| now)?|what time is it|what day is (it|today)|"
    r"what(?:'s| is) today'?s date|what(?:'s| is) the date today|what(?:'s| is) today)\W*$", re.I)
REMINDER = re.compile(
    r"^\W*(please\s+|can you\s+|could you\s+)?(remind me|set (an? |the )?(alarm|reminder|timer)|"
    r"wake me|schedule|ping me (later|tomorrow|at|in))\b", re.I)
PLATFORM_OF = {"bluesky": "bsky", "bsky": "bsky", "mastodon": "mastodon", "reddit": "reddit", "x": "x",
               "twitter": "x", "moltbook": "moltbook"}
# "post hello world on bluesky": the words to publish are there, only their quotes are missing.
UNQUOTED_POST = re.compile(
    r"^\W*(?:please\s+|can you\s+|could you\s+)?(?:post|tweet|toot|publish)\s+(?P<text>[^\"“”']{1,280}?)\s+"
    r"(?:on|to)\s+(?P<where>" + "|".join(PLATFORM_OF) + r")\W*$", re.I)
# ...unless they ask for a text to be written: "post something funny on bluesky".
WRITE_ME_ONE = re.compile(
    r"^(something|anything|a (post|tweet|toot|thread|joke|poem|story|message)|an? \w+ (post|tweet|toot))\b"
    r"|\babout\b", re.I)

REMINDERS_REPLY = (
    "I can't set reminders, alarms or schedules: I act only when you write to me. To keep something in "
    "mind, /remember <key> = <value> stores it. Nothing was done."
)


def clock_reply(now: datetime) -> str:
    return f"It is {now:%H:%M} on {now:%A}, {now.day} {now:%B %Y} (this machine's clock)."


def unquoted_post_reply(message: str) -> str | None:
    """How to post the words the message gives without quotes, or None when it gives none."""
    found = UNQUOTED_POST.match(message)
    if found is None or WRITE_ME_ONE.search(found.group("text")):
        return None
    text = neutralise(found.group("text")).strip()
    platform = PLATFORM_OF[found.group("where").lower()]
    return (f'To post exactly your words, put them in quotes: post "{text}" on {found.group("where")} '
            f"(or /post {platform} {text}). Nothing was posted.")
