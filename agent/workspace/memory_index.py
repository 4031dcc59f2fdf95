"""Memory as a turn reads it: parsed and indexed once, the prompt's entries found without a scan.

memory.json stays the source of truth (the owner edits it by hand, another agent process may
write it). The workspace keeps the `MemoryIndex` of the file as it last read it, with the file's
stat (device, inode, size, mtime and ctime in ns, `FileStamp`), and reads the file again only when
that stat changed (`MemoryFile`). Timestamps are coarse (a tick of some milliseconds, a second on
some file systems): a file changed within `RACY_SECONDS` of the moment it was read could change
again with the same stat, so until it has been still that long its bytes are read and compared
each time (no parse when they are the same), as git treats a "racily clean" index entry.

The index holds, per entry, its terms, its prompt line and that line's cost, computed once; a term
leads to the entries holding it. `select` then ranks as `agent.workspace.memory` describes (shared
words first, a key word counting double, then the newest, then the file's order) and stops when
the budget is full: a turn's memory costs the same with 10 facts stored or 10,000.
"""

from __future__ import annotations

import heapq
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import StateFileError
from agent.workspace.memory import (
    MIN_LINE_TOKENS,
    PROMPT_TOKENS,
    entry_value,
    estimate_tokens,
    is_public,
    memory_line,
    source_of,
    terms,
)

RACY_SECONDS = 2.0  # a file changed this recently may change again within one timestamp tick


@dataclass(frozen=True)
class Indexed:
    """One entry as the prompt shows it, computed once."""

    key: str
    entry: Any
    written: str
    line: str
    source: str | None  # None: the owner's own words
    cost: int  # the tokens its line (and source) take in the prompt


class MemoryIndex:
    """The entries of one memory dict, indexed for the prompt. `memory` is shared: never change it."""

    def __init__(self, memory: dict[str, Any]) -> None:
        self.memory = memory
        self.entries: list[Indexed] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}  # term -> (position, weight)
        for position, (key, entry) in enumerate(memory.items()):
            line, source = memory_line(key, entry), source_of(entry)
            cost = estimate_tokens(line) + (estimate_tokens(source) + 4 if source else 0)
            written = entry.get("written_at", "") if isinstance(entry, dict) else ""
            self.entries.append(Indexed(key, entry, str(written), line, source, cost))
            key_terms = terms(key.replace("_", " "))
            value_terms = terms(json.dumps(entry_value(entry), ensure_ascii=False))
            for term in key_terms | value_terms:
                weight = 2 * (term in key_terms) + (term in value_terms)
                self._postings.setdefault(term, []).append((position, weight))
        # Newest first; equal times keep the file's order (a stable sort), as the ranking does.
        written = [item.written for item in self.entries]
        self._by_recency = sorted(range(len(written)), key=written.__getitem__, reverse=True)
        self._rank = [0] * len(self.entries)
        for rank, position in enumerate(self._by_recency):
            self._rank[position] = rank
        self._cheapest_after = [0] * (len(self.entries) + 1)  # the least cost from each rank on
        self._cheapest_after[-1] = 1 << 30
        for rank in range(len(self._by_recency) - 1, -1, -1):
            cost = self.entries[self._by_recency[rank]].cost
            self._cheapest_after[rank] = min(cost, self._cheapest_after[rank + 1])
        self._lock = threading.Lock()
        self._derived: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def ranked(self, context: str) -> Iterator[tuple[Indexed, int]]:
        """Entries by relevance to `context`, lazily, each with a lower bound of the cost of it and
        of every entry after it."""
        scores: dict[int, int] = {}
        for term in terms(context):
            for position, weight in self._postings.get(term, ()):
                scores[position] = scores.get(position, 0) + weight
        cheapest = self._cheapest_after[0]
        heap = [(-score, self._rank[position], position) for position, score in scores.items()]
        heapq.heapify(heap)
        while heap:
            yield self.entries[heapq.heappop(heap)[2]], cheapest
        for rank, position in enumerate(self._by_recency):
            if position not in scores:
                yield self.entries[position], self._cheapest_after[rank]

    def derived(self, name: str, build: Callable[[MemoryIndex], Any]) -> Any:
        """What a turn computes from the whole of memory (its public part, what it tells a model),
        computed once per index: the result is shared, never change it."""
        with self._lock:
            if name not in self._derived:
                self._derived[name] = build(self)
            return self._derived[name]

    def public(self) -> MemoryIndex:
        """The index of the entries the owner made public (what a turn someone else wrote sees)."""
        result: MemoryIndex = self.derived(
            "public", lambda index: MemoryIndex({e.key: e.entry for e in index.entries if is_public(e.entry)})
        )
        return result

    def owner_values(self) -> dict[str, Any]:
        """The values of the owner's own entries, by key (what a provider may read as memory)."""
        result: dict[str, Any] = self.derived(
            "owner_values",
            lambda index: {e.key: entry_value(e.entry) for e in index.entries if e.source is None},
        )
        return result


def index_of(memory: dict[str, Any] | MemoryIndex) -> MemoryIndex:
    return memory if isinstance(memory, MemoryIndex) else MemoryIndex(memory)


@dataclass
class MemoryView:
    """What of memory the prompt shows: the owner's lines, the outside lines with their source."""

    owner: list[str]
    outside: list[tuple[str, str]]  # (line, source)
    left_out: int


def select(memory: dict[str, Any] | MemoryIndex, context: str, budget: int = PROMPT_TOKENS) -> MemoryView:
    """The entries most relevant to `context` that fit `budget` tokens, in that order; once no entry
    left can fit, the rest are counted as left out without being looked at."""
    index = index_of(memory)
    view = MemoryView([], [], 0)
    used = looked = 0
    for item, cheapest in index.ranked(context):
        if budget - used <= MIN_LINE_TOKENS or budget - used < cheapest:  # full: no entry fits any more
            break
        looked += 1
        if used + item.cost > budget:
            view.left_out += 1
            continue
        used += item.cost
        if item.source is None:
            view.owner.append(item.line)
        else:
            view.outside.append((item.line, item.source))
    view.left_out += len(index) - looked
    return view


@dataclass(frozen=True)
class FileStamp:
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, stat: os.stat_result) -> FileStamp:
        return cls(stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)

    def settled(self, now: float) -> bool:
        """Whether a change from now on would show in the stat: a change sets both times to the
        present, so one of them old enough suffices (utime leaves an old mtime and a new ctime)."""
        return now - min(self.mtime_ns, self.ctime_ns) / 1e9 > RACY_SECONDS


@dataclass
class MemoryFile:
    """memory.json's last reading: its stamp, its bytes and its index. `load` reads the file again
    only when its stamp changed (or it changed too recently to trust the stamp)."""

    path: Path
    parse: Callable[[bytes], dict[str, Any]]  # raises StateFileError on a corrupt file
    _stamp: FileStamp | None = None
    _raw: bytes | None = None
    _index: MemoryIndex | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self) -> MemoryIndex:
        with self._lock:
            try:
                stamp = FileStamp.of(os.stat(self.path))
                if self._index is not None and stamp == self._stamp and stamp.settled(time.time()):
                    return self._index
                raw = self.path.read_bytes()
            except FileNotFoundError:
                self._stamp, self._raw, self._index = None, None, None
                return MemoryIndex({})
            except OSError as exc:
                raise StateFileError(f"cannot read {self.path}: {exc.strerror}") from None
            index = self._index
            if index is None or raw != self._raw:
                index = MemoryIndex(self.parse(raw))
                self._index, self._raw = index, raw
            self._stamp = stamp
            return index
