"""A value's two labels, set by loop code and never by the model.

- `words`: whose words it holds: the owner's (`OWNER_WORDS`), a named outside source
  (`outside:<what was read>`), or the agent's own from a turn that had read outside text
  (`AGENT_TAINTED`).
- `readers`: who may read it: anyone (`PUBLIC`) or the owner only (`OWNER_ONLY`: memory, direct
  messages, notifications, the owner's private messages to the agent).

A value derived from others carries the union (`Label.union`): the words of all, and the
narrower readers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

OWNER_WORDS = "owner"
AGENT_TAINTED = "agent:tainted"
OUTSIDE_PREFIX = "outside:"
PUBLIC = "public"
OWNER_ONLY = "owner_only"
READERS = (PUBLIC, OWNER_ONLY)
MAX_WORDS = 32
MAX_WORD_CHARS = 300


class LabelError(ValueError):
    """A stored label that is not one."""


@dataclass(frozen=True)
class Label:
    words: frozenset[str]
    readers: str = OWNER_ONLY

    def __post_init__(self) -> None:
        if self.readers not in READERS:
            raise LabelError(f"readers must be one of {', '.join(READERS)}, not {self.readers!r}")
        if not self.words or not all(isinstance(w, str) and w for w in self.words):
            raise LabelError("a label names whose words it holds")

    @property
    def owners_alone(self) -> bool:
        """Only the owner's words: nothing outside chose any of it."""
        return self.words == {OWNER_WORDS}

    @property
    def outside(self) -> list[str]:
        return sorted(w[len(OUTSIDE_PREFIX):] for w in self.words if w.startswith(OUTSIDE_PREFIX))

    def union(self, *others: Label) -> Label:
        words = set(self.words).union(*(o.words for o in others))
        readers = OWNER_ONLY if OWNER_ONLY in {self.readers, *(o.readers for o in others)} else PUBLIC
        return Label(frozenset(sorted(words)[:MAX_WORDS]), readers)

    def to_dict(self) -> dict[str, Any]:
        return {"words": sorted(self.words), "readers": self.readers}

    @classmethod
    def from_dict(cls, data: Any) -> Label:
        if not isinstance(data, Mapping) or set(data) != {"words", "readers"}:
            raise LabelError('a label is {"words": [...], "readers": "public" | "owner_only"}')
        words = data["words"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise LabelError("a label's words are a list of strings")
        return cls(frozenset(w[:MAX_WORD_CHARS] for w in words[:MAX_WORDS]), data["readers"])


def owners(readers: str = OWNER_ONLY) -> Label:
    return Label(frozenset({OWNER_WORDS}), readers)


def outside(sources: Iterable[str], readers: str = PUBLIC) -> Label:
    words = frozenset(f"{OUTSIDE_PREFIX}{s[:MAX_WORD_CHARS - len(OUTSIDE_PREFIX)]}" for s in sources)
    return Label(words or frozenset({f"{OUTSIDE_PREFIX}unknown"}), readers)


def label_of(value: Any) -> Label | None:
    """The label stored with a value (a memory entry, an observation), None when it has none or an
    unreadable one (the caller treats that as outside words)."""
    if not isinstance(value, Mapping) or "label" not in value:
        return None
    try:
        return Label.from_dict(value["label"])
    except LabelError:
        return None
