"""How much of a model's reply, and of a history entry, the agent keeps.

A reply is cut at `max_reply_chars` (64 KB unless config.json says otherwise) before it is parsed,
shown, sent or kept: a model that answers with 10 MB would otherwise be sent as thousands of
messages and carried by every later prompt. History keeps at most `MAX_HISTORY_ENTRY_CHARS` of
each message and reply; what is cut is said, in the text itself.
"""

from __future__ import annotations

DEFAULT_MAX_REPLY_CHARS = 64 * 1024
MAX_HISTORY_ENTRY_CHARS = 16 * 1024


def capped(text: str, limit: int, what: str) -> str:
    """`text`, or its first part with a note saying how much was cut, within `limit` characters."""
    if len(text) <= limit:
        return text
    note = f"\n\n[{what} truncated: {len(text):,} characters, the first {{kept:,}} kept]"
    kept = max(0, limit - len(note) - 12)
    return text[:kept] + note.format(kept=kept)


def capped_reply(text: str, limit: int = DEFAULT_MAX_REPLY_CHARS) -> str:
    return capped(text, limit, "the model's reply was")


def history_entry(text: str) -> str:
    return capped(text, MAX_HISTORY_ENTRY_CHARS, "this message was")
