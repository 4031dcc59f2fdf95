"""Everyday asks a newcomer tries first that no action does: the time, a reminder, a post's words
given without quotes, the dry run, the kill switch, approvals. Each gets a plain answer written
here, never an action guessed at. The questions are matched from the message's start and never
when it quotes words (those are a text to publish)."""

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
# A message with no quoted words: a question about SafeClaw, not a text to publish.
UNQUOTED = r"^(?![^\"“”]*[\"“”])"
# "why is it a dry run?", "did that go out?": the dry run, said plainly.
DRY_RUN_ASKED = re.compile(
    UNQUOTED + r"(\W*(why|what|how|is|are|does|do|can|will|when|turn|switch)\b.*\bdry[ -]?run\b|"
    r"\W*(did|has|have|was|were|is)\s+(that|it|this|my post|the post|my like)\s+"
    r"(go|gone|sent|out|posted|published|live|really)\b)", re.I)
# "stop posting", "where is the kill switch": only the owner flips it, never the agent.
STOP_ASKED = re.compile(
    UNQUOTED + r"(\W*(please\s+)?(stop|pause|halt|disable|freeze)\s+(all\s+)?"
    r"(posting|posts|publishing|everything)\b|"
    r"\W*(where|what|how|is|turn|flip|use|can)\b.*\bkill[ -]?switch\b|"
    r"\W*(please\s+)?stop (yourself|the agent|the bot)\b)", re.I)
# "is anything waiting for my approval?": what /approvals is for.
APPROVALS_ASKED = re.compile(
    UNQUOTED + r"\W*(is|are|does|do|what|which|anything|any|show|list|how|where)\b.*"
    r"\b(approv\w*|waiting for me|pending)\b", re.I)
# "show me what you posted": where what was done is kept.
DONE_ASKED = re.compile(
    UNQUOTED + r"(\W*(please\s+)?(show|list|tell)( me)? (what|everything) (you|i) "
    r"(posted|did|have posted|have done)\b|\W*what (did|have) you (post|posted|do|done)\b)", re.I)
# "open example.com": a page named without its scheme, which the model's fill cannot take.
OPEN_BARE_HOST = re.compile(
    r"^\W*(please\s+)?(open|browse|visit|go to|read|summari[sz]e|load)\s+(the page\s+)?"
    r"(?P<host>(www\.)?[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}[^\s?!.,]*)\W*$", re.I)
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
