"""The agent's memory: entries with provenance, checked on the way in, budgeted on the way out.

Each entry of memory.json is `{"value", "written_at", "conversation", "author"}`, plus
`"after_reading"` when the turn had already seen outside data (web pages, router results)
when the model wrote it. `author` is "owner" or who else wrote the turn. Only the owner's own
words are shown as memory; anything else (an entry read from outside data, one written before
SafeClaw kept provenance) is shown fenced as data, with where it came from.

A turn written by someone else (a Bluesky post, a forward, the autonomy feed: any message with
an `outside_author`) cannot write memory at all (`check_writer`), and sees only the entries the
owner made public (`/public <key>`, which sets `"public": true`; see `visible_to`): an obedient
model answering a stranger could otherwise repeat the owner's private facts to them.

The prompt shows the entries that fit `PROMPT_TOKENS`, the most relevant to the message first: shared
words (a key word counts double), then the newest (`agent.workspace.memory_index.select`).
"""

from __future__ import annotations

import json
import math
import re
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

from agent.errors import AgentError
from agent.flow.labels import OWNER_ONLY, PUBLIC, Label, outside, owners

OWNER = "owner"
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 500  # of the value as JSON
MAX_ENTRIES = 200
MAX_TOTAL_CHARS = 40_000  # keys plus values as JSON, every entry together
MAX_WRITE_ENTRIES = 20  # entries one action may write
PROMPT_TOKENS = 200  # the memory section's share of the prompt
MIN_LINE_TOKENS = 6  # the smallest an entry's line can cost ("- k: 1")
_WORD = re.compile(r"\w+|[^\w\s]")
_TERM = re.compile(r"\w{3,}")
_STOP = frozenset(
    {
        "the",
        "and",
        "for",
        "you",
        "your",
        "with",
        "that",
        "this",
        "what",
        "are",
        "was",
        "have",
        "from",
        "not",
        "but",
        "can",
        "about",
        "who",
        "how",
        "when",
    }
)


class MemoryRefused(AgentError):
    """A memory write that is refused; the message is shown to the model and the owner."""


def estimate_tokens(text: str) -> int:
    """A cautious token count: the larger of words-and-symbols and characters / 4."""
    return max(len(_WORD.findall(text)), math.ceil(len(text) / 4))


def check_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise MemoryRefused("memory keys must be non-empty text")
    if len(key) > MAX_KEY_CHARS:
        raise MemoryRefused(f"the key {key[:MAX_KEY_CHARS]!r}… is longer than {MAX_KEY_CHARS} characters")
    if one_line(key) != key:
        raise MemoryRefused(f"the key {key!r} holds a line break or control character; keys are one line")
    return key


def value_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def check_writer(outside_author: str | None) -> None:
    """Only the owner's turns write memory. A stranger's words never become the owner's memory:
    shown fenced they would still sit in every later owner prompt, and fill its budget."""
    if outside_author is not None:
        raise MemoryRefused(
            f"refused: this turn was written by {outside_author}, not by your owner, and only your owner's "
            "turns may write memory. Tell your owner about it instead if it matters."
        )


@dataclass(frozen=True)
class Provenance:
    conversation: str
    author: str = OWNER
    after_reading: tuple[str, ...] = ()  # outside data the turn had seen before the write

    def stamp(self) -> dict[str, Any]:
        stamp: dict[str, Any] = {
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "conversation": self.conversation,
            "author": self.author,
        }
        if self.after_reading:
            stamp["after_reading"] = list(self.after_reading)
        return stamp | {"label": self.label().to_dict()}

    def label(self) -> Label:
        """Whose words the entry holds (the owner's, or theirs and what the turn had read), readable
        by the owner only until the owner makes it public."""
        if self.author != OWNER:
            return outside([self.author])
        own = owners(OWNER_ONLY)
        return own.union(outside(self.after_reading)) if self.after_reading else own


def merged(memory: dict[str, Any], new_memory: dict[str, Any], provenance: Provenance) -> dict[str, Any]:
    """`memory` with `new_memory` applied (a null value forgets the key); MemoryRefused when a key,
    a value or the whole would break a cap. Nothing is applied unless everything fits."""
    if not isinstance(new_memory, dict) or not new_memory:
        raise MemoryRefused('new_memory must be a non-empty object, e.g. {"new_memory": {"cat": "Miso"}}')
    if len(new_memory) > MAX_WRITE_ENTRIES:
        raise MemoryRefused(f"at most {MAX_WRITE_ENTRIES} memory entries at once")
    result = dict(memory)
    for key, value in new_memory.items():
        check_key(key)
        if value is None:
            result.pop(key, None)
            continue
        if value_size(value) > MAX_VALUE_CHARS:
            raise MemoryRefused(f"the value of {key!r} is longer than {MAX_VALUE_CHARS} characters")
        result[key] = {"value": value, **provenance.stamp()}
    if len(result) > MAX_ENTRIES or total_size(result) > MAX_TOTAL_CHARS:
        raise MemoryRefused(
            f"memory is full ({len(memory)} entries, {total_size(memory)} characters; at most {MAX_ENTRIES} "
            f"entries and {MAX_TOTAL_CHARS} characters). Forget something first (_MEMORY_FORGET, /forget)."
        )
    return result


def total_size(memory: dict[str, Any]) -> int:
    return sum(len(str(key)) + value_size(entry_value(entry)) for key, entry in memory.items())


def entry_value(entry: Any) -> Any:
    return entry.get("value") if isinstance(entry, dict) and "value" in entry else entry


def source_of(entry: Any) -> str | None:
    """None for the owner's own words; else who or what the entry came from, for the fence."""
    if not isinstance(entry, dict):
        return None  # a plain value the owner typed into memory.json by hand
    author = entry.get("author")
    if author is None:
        return f"unknown: written in {entry.get('conversation', '?')} before SafeClaw kept provenance"
    if author != OWNER:
        return f"{author}, in {entry.get('conversation', '?')}"
    reading = entry.get("after_reading")
    if reading:
        where = entry.get("conversation", "?")
        return f"your owner's turn in {where}, after reading {', '.join(map(str, reading))}"
    return None


def is_public(entry: Any) -> bool:
    """True for the owner's own words that the owner made public (a rewrite makes them private)."""
    return isinstance(entry, dict) and entry.get("public") is True and source_of(entry) is None


def visible_to(memory: dict[str, Any], outside_author: str | None) -> dict[str, Any]:
    """What of memory a turn may see: all of it for the owner, the public entries for anyone else."""
    if outside_author is None:
        return memory
    return {key: entry for key, entry in memory.items() if is_public(entry)}


def with_public(memory: dict[str, Any], key: str, public: bool) -> dict[str, Any]:
    """`memory` with `key` made public (or private again); MemoryRefused when it cannot be."""
    if key not in memory:
        raise MemoryRefused(f"nothing is remembered under {key!r} (/memory lists the keys)")
    entry = memory[key]
    if public and (not isinstance(entry, dict) or source_of(entry) is not None):
        raise MemoryRefused(
            f"{key!r} is not your own words (or has no record of who wrote it), so it cannot be made "
            "public; write it again with /remember first"
        )
    result = dict(memory)
    if isinstance(entry, dict):
        kept = {k: v for k, v in entry.items() if k not in ("public", "label")}
        label = owners(PUBLIC if public else OWNER_ONLY).to_dict()
        result[key] = kept | ({"public": True} if public else {}) | {"label": label}
    return result


def terms(text: str) -> set[str]:
    return {t for t in _TERM.findall(text.lower()) if t not in _STOP}


def hidden_or_breaking(ch: str) -> bool:
    """Control, format (bidi, zero-width), unassigned characters and line or paragraph separators."""
    category = unicodedata.category(ch)
    return category[0] == "C" or category in ("Zl", "Zp")


def one_line(text: str) -> str:
    """`text` with line breaks and control characters shown as "?": an entry is one line."""
    if text.isprintable():  # False for each character hidden_or_breaking finds (and odd spaces)
        return text
    return "".join("?" if hidden_or_breaking(ch) else ch for ch in text)


def visible_json(value: Any) -> str:
    """`value` as JSON, where line and paragraph separators, bidi controls and invisible characters
    (which JSON leaves raw) are written as \\u escapes: a value stays on its line, all of it shown."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isprintable():  # the common case, without a look at each character
        return text
    return "".join(f"\\u{ord(ch):04x}" if hidden_or_breaking(ch) else ch for ch in text)


def memory_line(key: str, entry: Any) -> str:
    # Keys written before they were checked may hold a line break: it must not start a new entry.
    return f"- {one_line(str(key))[:MAX_KEY_CHARS]}: {visible_json(entry_value(entry))}"
