"""Fingerprints of the texts a duplicate guard keeps, and its history of them (`KnownHistory`):
what lets a check rule most kept texts out without decoding and comparing their trigrams.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from router.bounds import as_text
from router.bounds.text_trigrams import unpack

BUCKETS = 2048  # the overlap bound's buckets: a trigram hash's low 11 bits


def buckets(grams: Iterable[int]) -> int:
    """The set of buckets (bits of an int) holding at least one of the trigram hashes."""
    bits = bytearray(BUCKETS // 8)
    for gram in grams:
        bucket = gram & (BUCKETS - 1)
        bits[bucket >> 3] |= 1 << (bucket & 7)
    return int.from_bytes(bits, "little")


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a check compares a text by: its trigram count and its buckets, computed once per text.

    `overlap_bound` is never below the true number of shared trigrams: two texts share at most one
    trigram per bucket both occupy, plus, beyond the first in each bucket, no more than the fewer
    of the two texts' extra trigrams (`spill`). So a pair whose bound cannot reach the threshold
    is skipped without decoding and comparing the stored trigrams, and no match is ever missed."""

    size: int
    bits: int
    spill: int  # trigrams beyond the first in their bucket

    @classmethod
    def of(cls, grams: Collection[int]) -> Fingerprint:
        bits = buckets(grams)
        return cls(len(grams), bits, len(grams) - bits.bit_count())

    def overlap_bound(self, other: Fingerprint) -> int:
        return (self.bits & other.bits).bit_count() + min(self.spill, other.spill)


@dataclass(frozen=True, slots=True)
class Sent:
    """One kept text of the history: its fingerprint, its packed trigrams, when it was sent."""

    print: Fingerprint
    packed: str
    sent_at: float


class KnownHistory:
    """One history as this guard last read it, each entry fingerprinted once, when first read.

    Beside the entries, columns for the first pass of a check (`candidates`): each entry's
    bucket bits and the part of the overlap a match with it needs that depends on its size
    alone. A dropped entry leaves a hole (no bits, an overlap no text reaches) until the columns
    are compacted."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.entries: dict[str, Sent] = {}
        self.newest = float("-inf")
        self.oldest = float("inf")  # no entry was sent before this
        self.version = -1  # the history's change counter when it was last known whole
        self._slots: dict[str, int] = {}
        self._names: list[str | None] = []
        self._bits: list[int] = []
        self._needs: list[float] = []  # threshold/2 x its trigram count
        self._holes = 0

    def merge(self, fetched: list[tuple[bytes | str, float]], mine: tuple[str, Fingerprint]) -> None:
        for raw, sent_at in fetched:
            name = as_text(raw)
            if name not in self.entries:
                _, _size, packed = name.split("|", 2)
                found = mine[1] if name == mine[0] else Fingerprint.of(unpack(packed))
                self.entries[name] = Sent(found, packed, float(sent_at))
                self._slots[name] = len(self._names)
                self._names.append(name)
                self._bits.append(found.bits)
                self._needs.append(self.threshold / 2 * found.size)
                self.oldest = min(self.oldest, float(sent_at))
            self.newest = max(self.newest, float(sent_at))

    def keep_only(self, names: set[str]) -> None:
        for name in [n for n in self.entries if n not in names]:
            self.drop(name)

    def trim(self, oldest: float) -> None:
        if self.oldest >= oldest:
            return
        for name in [n for n, entry in self.entries.items() if entry.sent_at < oldest]:
            self.drop(name)
        self.oldest = min((entry.sent_at for entry in self.entries.values()), default=float("inf"))

    def drop(self, name: str) -> None:
        if self.entries.pop(name, None) is None:
            return
        slot = self._slots.pop(name)
        self._names[slot], self._bits[slot], self._needs[slot] = None, 0, math.inf
        self._holes += 1
        if self._holes > 64 and self._holes * 2 > len(self._names):
            self._compact()

    def _compact(self) -> None:
        names = [name for name in self._names if name is not None]
        self._names = list(names)
        self._slots = {name: slot for slot, name in enumerate(names)}
        self._bits = [self.entries[name].print.bits for name in names]
        self._needs = [self.threshold / 2 * self.entries[name].print.size for name in names]
        self._holes = 0

    def candidates(self, mine: Fingerprint) -> list[str]:
        """The entries a match with `mine` is not ruled out for by a loose form of the bound (the
        new text's spill in place of the smaller one), in one pass of C-level maps: for entry i,
        shared buckets_i + spill >= t/2 (size + size_i), less a margin for rounding."""
        shared = map(int.bit_count, map(mine.bits.__and__, self._bits))
        floor = self.threshold / 2 * mine.size - mine.spill - 1e-6
        reached = map(operator.ge, shared, map(floor.__add__, self._needs))
        return [name for name in itertools.compress(self._names, reached) if name is not None]
