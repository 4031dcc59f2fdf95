"""Memory as a turn reads it: parsed and indexed once, the prompt's entries found without a scan.

memory.json stays the source of truth (the owner edits it by hand, another agent process may
write it). The workspace keeps the `MemoryIndex` of the file as it last read it, with the file's
stat (device, inode, size, mtime and ctime in ns, `FileStamp`), and reads the file again only when
that stat changed (`MemoryFile`). Timestamps are coarse (a tick of some milliseconds, a second on
some file systems): a file changed within `RACY_SECONDS` of the moment it was read could change
again with the same stat, so until it has been still that long its bytes are read and compared
each time (no parse when they are the same), as git treats a "racily clean" index entry.

The index holds, per entry, its prompt line and that line's cost, computed once, and per term the
entries holding it. `select` then ranks as `agent.workspace.memory` describes (shared words
first, a key word counting double, then the newest, then the file's order), skipping unseen the
entries that no longer fit, so a turn's memory costs about the same with 10 facts stored or
10,000. What else a turn needs of the whole memory (its public part, the values a provider
reads, the owner-only values the sinks search for, the facts from outside) is computed once per
index (`MemoryIndex.derived`).
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

NOTHING_FITS = 1 << 30  # the cost of no entry
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


class Fitting:
    """Positions in an order, and the next of them whose entry costs at most the room left (the
    least cost over ranges of them kept in a segment tree): entries that cannot fit are skipped
    unseen."""

    def __init__(self, positions: list[int], costs: list[int]) -> None:
        self.positions = positions
        self._size = 1 << max(len(positions) - 1, 0).bit_length()
        self._least = [NOTHING_FITS] * self._size + [costs[i] for i in positions]
        self._least += [NOTHING_FITS] * (2 * self._size - len(self._least))
        for node in range(self._size - 1, 0, -1):
            self._least[node] = min(self._least[2 * node], self._least[2 * node + 1])

    def least(self) -> int:
        return self._least[1]

    def first(self, start: int, room: int) -> int | None:
        """The first index from `start` on whose entry costs at most `room`, or None."""
        if start >= len(self.positions):
            return None
        least, node = self._least, start + self._size
        while least[node] > room:
            while node & 1:  # a right child: up to the first ancestor that is a left one
                node >>= 1
            if node == 0:
                return None
            node += 1  # its right sibling: the indexes after
        while node < self._size:
            node = 2 * node if least[2 * node] <= room else 2 * node + 1
        return node - self._size

    def fitting(
        self, room: Room, score: int, rank: list[int], left: set[int]
    ) -> Iterator[tuple[int, int, int]]:
        """(score, rank, position) of each position that fits `room` when reached, not in `left`."""
        start = 0
        while (at := self.first(start, room.left)) is not None:
            position, start = self.positions[at], at + 1
            if position not in left:
                yield score, rank[position], position


class MemoryIndex:
    """The entries of one memory dict, indexed for the prompt. `memory` is shared: never change it."""

    def __init__(self, memory: dict[str, Any]) -> None:
        self.memory = memory
        self.entries: list[Indexed] = []
        self._postings: dict[str, dict[int, int]] = {}  # term -> {position: weight}
        self._groups: dict[str, tuple[Fitting, ...]] = {}  # term -> its entries by weight (3, 2, 1)
        for position, (key, entry) in enumerate(memory.items()):
            line, source = memory_line(key, entry), source_of(entry)
            cost = estimate_tokens(line) + (estimate_tokens(source) + 4 if source else 0)
            written = entry.get("written_at", "") if isinstance(entry, dict) else ""
            self.entries.append(Indexed(key, entry, str(written), line, source, cost))
            key_terms = terms(str(key).replace("_", " "))
            value_terms = terms(json.dumps(entry_value(entry), ensure_ascii=False))
            for term in key_terms | value_terms:
                weight = 2 * (term in key_terms) + (term in value_terms)
                self._postings.setdefault(term, {})[position] = weight
        self._costs = [item.cost for item in self.entries]
        # Newest first; equal times keep the file's order (a stable sort), as the ranking does.
        written = [item.written for item in self.entries]
        newest = sorted(range(len(written)), key=written.__getitem__, reverse=True)
        self._by_recency = Fitting(newest, self._costs)
        self._rank = [0] * len(self.entries)
        for rank, position in enumerate(self._by_recency.positions):
            self._rank[position] = rank
        self._lock = threading.Lock()
        self._derived: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def ranked(self, context: str, room: Room) -> Iterator[Indexed]:
        """Entries by relevance to `context`, lazily, leaving out unseen those that cost more than
        `room.left` (the tokens left) when reached. An entry sharing one term with the context
        scores that term's weight: those come from the term's lists (by weight, newest first),
        merged with the few entries sharing several terms, scored one by one; then the newest."""
        shared = [term for term in terms(context) if term in self._postings]
        postings = [self._postings[term] for term in shared]
        several: set[int] = set()
        for n, first in enumerate(postings):
            for second in postings[n + 1 :]:
                several |= first.keys() & second.keys()
        rank = self._rank
        scored = sorted((-sum(p.get(i, 0) for p in postings), rank[i], i) for i in several)
        streams: list[Iterator[tuple[int, int, int]]] = [iter(scored)]
        for term in shared:
            for weight, group in zip((3, 2, 1), self._groups_of(term), strict=True):
                streams.append(group.fitting(room, -weight, rank, several))
        for _, _, position in heapq.merge(*streams):
            if room.left < self._by_recency.least():
                return  # no entry can fit any more
            yield self.entries[position]
        for _, _, position in self._by_recency.fitting(room, 0, rank, set()):
            if not any(position in posting for posting in postings):
                yield self.entries[position]

    def _groups_of(self, term: str) -> tuple[Fitting, ...]:
        """A term's entries of weight 3, 2 and 1, each newest first (sorted once, then kept)."""
        groups = self._groups.get(term)
        if groups is None:
            posting = self._postings[term]
            ordered = sorted(posting, key=self._rank.__getitem__)
            groups = tuple(Fitting([i for i in ordered if posting[i] == w], self._costs) for w in (3, 2, 1))
            self._groups[term] = groups
        return groups

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
class Room:
    left: int  # the tokens of the budget not yet taken


@dataclass
class MemoryView:
    """What of memory the prompt shows: the owner's lines, the outside lines with their source."""

    owner: list[str]
    outside: list[tuple[str, str]]  # (line, source)
    left_out: int


def select(memory: dict[str, Any] | MemoryIndex, context: str, budget: int = PROMPT_TOKENS) -> MemoryView:
    """The entries most relevant to `context` that fit `budget` tokens, in that order; the entries
    that can no longer fit are counted as left out without being looked at."""
    index = index_of(memory)
    view, room = MemoryView([], [], 0), Room(budget)
    looked = 0
    for item in index.ranked(context, room):
        if room.left <= MIN_LINE_TOKENS:  # full: no entry fits any more
            break
        looked += 1
        if item.cost > room.left:
            view.left_out += 1
            continue
        room.left -= item.cost
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
