"""The duplicate-content guard: no text at least 90% similar to one sent in the last 7 days.

Similarity: the Sørensen-Dice coefficient of the sets of character trigrams of the normalised
texts, 2|A∩B| / (|A|+|B|). It is linear in the text's length, order-sensitive enough that a
reshuffled text is not "the same", and forgiving of a changed word: one word changed in a
100-character text scores about 0.93. Two sets can only reach the threshold t when their sizes
are within a ratio of t / (2 - t) (the fingerprints' bound below, never above the smaller size,
rules the others out too).

Normalising (before the trigrams): NFKC, invisible characters dropped (format characters such
as zero-width and bidi, every combining mark, the Hangul fillers), links dropped (a link added
to a text does not make it new), case folded, accents dropped, common Cyrillic/Greek look-alikes
mapped to Latin, every run of punctuation, symbols (emoji) and spaces made one space. The
trigrams are then taken with the spaces left out, so letters spaced or dotted apart
("s.p.a.m") are the same letters.

Stored: no text, only each trigram's 32-bit CRC (sorted, base64) in a sorted set per platform
(or one for all, ROUTER_DUPLICATE_SCOPE=all) scored by the send time; entries older than the
window are trimmed on every check, and the key's TTL ends a quiet platform's history. As in
`pacing`, a check adds its own entry before it reads, so two similar texts racing on two routers
cannot both pass (of two racing checks, the one counted second sees the counter jump and reads
the other's entry).

Incremental: a guard keeps the history it has read, each text fingerprinted once when first
read (`Fingerprint`: its trigram count and which of 2,048 buckets its trigrams fall in). Beside
each history a change counter (`<key>:version`) goes up by one with each entry added or taken
out. A check adds its entry and counts it in one round trip: when the counter says ours was the
only change since this guard's last look, and the set's size agrees, nothing is read. Otherwise
it fetches the entries sent since its newest one (less `SLACK_SECONDS` for clocks and round trips
between routers) with the set's size, and when the size still disagrees (an entry taken out, or
one missed) it reads every name again, fingerprinting only the new ones. A check then compares
the new text's fingerprint with each kept one, an AND and a bit count: only a text whose bound on
the shared trigrams can reach the threshold is decoded and compared exactly.
"""

from __future__ import annotations

import base64
import itertools
import math
import operator
import re
import threading
import unicodedata
import uuid
import zlib
from array import array
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged, as_text, seconds_until
from router.bounds.settings import BoundsSettings

DAY = 24 * 3600
SLACK_SECONDS = 300.0  # another router's entry may carry a send time this far behind ours
# Letters that look like Latin ones and are used to dodge filters (a subset of Unicode's
# confusables: the lowercase Cyrillic, Greek, Armenian and Latin variants that render like ASCII).
_LOOKALIKE_PAIRS = (
    ("авеёкмнорстухіјѕԁԛԝһүӏѵѡ", "abeekmhopctyxijsdqwhylvw"),  # Cyrillic
    ("αβεικνορτυχγϲϳ", "abeikvoptuxycj"),  # Greek
    ("օսհոցաքզ", "ouhngwpq"),  # Armenian
    ("ıȷɑɡɩɪʏʀɴʙʜɢʟ", "ijagiiyrnbhgl"),  # Latin variants: dotless, script, small capitals
    ("ᴀᴄᴅᴇᴊᴋᴍᴏᴘᴛᴜᴠᴡᴢꜱ", "acdejkmoptuvwzs"),  # phonetic small capitals
)
_LOOKALIKES = str.maketrans("".join(a for a, _ in _LOOKALIKE_PAIRS), "".join(b for _, b in _LOOKALIKE_PAIRS))
_NOT_WORD = re.compile(r"[\W_]+")
_LINK = re.compile(r"(?:https?://|www\.)\S*", re.IGNORECASE)
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me"})  # format characters, combining marks
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters (Lo) that show nothing


def _visible(text: str) -> str:
    return "".join(
        c for c in text if unicodedata.category(c) not in _INVISIBLE_CATEGORIES and c not in _FILLERS
    )


def normalise(text: str) -> str:
    # ASCII is its own NFKC and NFKD and holds no invisible character: those steps are skipped.
    if not text.isascii():
        text = _visible(unicodedata.normalize("NFKC", text))
    text = _LINK.sub(" ", text.casefold())
    if not text.isascii():
        text = _visible(unicodedata.normalize("NFKD", text))
    return _NOT_WORD.sub(" ", text.translate(_LOOKALIKES)).strip()


def trigrams(text: str) -> frozenset[int]:
    """The CRC-32 of each character trigram of the normalised text without its spaces (the whole
    text if shorter)."""
    norm = normalise(text).replace(" ", "") or text.strip().casefold()  # all symbols or a bare link
    if norm.isascii():  # a character is a byte: slice the bytes
        raw = norm.encode("ascii")
        grams = {raw[i : i + 3] for i in range(max(1, len(raw) - 2))}
    else:
        grams = {norm[i : i + 3].encode("utf-8") for i in range(max(1, len(norm) - 2))}
    return frozenset(map(zlib.crc32, grams))


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


BUCKETS = 2048  # the overlap bound's buckets: a trigram hash's low 11 bits


def encode(grams: frozenset[int]) -> str:
    return base64.b64encode(array("I", sorted(grams)).tobytes()).decode("ascii")


def decode(text: str) -> frozenset[int]:
    return frozenset(_unpack(text))


def _unpack(text: str) -> array[int]:
    values = array("I")
    values.frombytes(base64.b64decode(text))
    return values


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
class _Sent:
    """One kept text of the history: its fingerprint, its packed trigrams, when it was sent."""

    print: Fingerprint
    packed: str
    sent_at: float


class _Known:
    """One history as this guard last read it, each entry fingerprinted once, when first read.

    Beside the entries, columns for the first pass of a check (`candidates`): each entry's
    bucket bits and the part of the overlap a match with it needs that depends on its size
    alone. A dropped entry leaves a hole (no bits, an overlap no text reaches) until the columns
    are compacted."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.entries: dict[str, _Sent] = {}
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
                found = mine[1] if name == mine[0] else Fingerprint.of(_unpack(packed))
                self.entries[name] = _Sent(found, packed, float(sent_at))
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


@dataclass(frozen=True)
class SentEntry:
    """This command's text in the history; `release` takes it out when the text was not sent."""

    key: str
    member: str


class DuplicateGuard:
    def __init__(self, settings: BoundsSettings, prefix: str) -> None:
        self.settings = settings
        self.prefix = prefix  # e.g. "safeclaw:router:sent:"
        self.window = settings.duplicate_days * DAY
        self._known: dict[str, _Known] = {}
        self._lock = threading.Lock()

    def key(self, platform: str) -> str:
        return f"{self.prefix}{'all' if self.settings.duplicate_scope == 'all' else platform}"

    @staticmethod
    def version_key(key: str) -> str:
        """A history's change counter: one more for each entry added or taken out."""
        return f"{key}:version"

    def take(self, conn: Counters, effect: EffectLike, now: float) -> SentEntry | Denial | None:
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        staged = self.stage(pipe, effect, now)
        return None if staged is None else staged.take(conn, pipe)

    def stage(self, pipe: Any, effect: EffectLike, now: float) -> Staged[SentEntry] | None:
        published = effect.all_text  # a title or a link is published too
        if effect.kind not in ("post", "reply") or not published.strip():
            return None
        grams = trigrams(published)
        key = self.key(effect.platform)
        member = f"{uuid.uuid4().hex}|{len(grams)}|{encode(grams)}"
        pipe.zremrangebyscore(key, "-inf", f"({now - self.window}")
        pipe.zadd(key, {member: now})
        pipe.incr(self.version_key(key))  # after our entry: who comes later sees it in the set
        pipe.zcard(key)
        pipe.expire(key, self.window + DAY)
        pipe.expire(self.version_key(key), self.window + DAY)
        return Staged(6, lambda conn, answers: self._settle(conn, effect, now, grams, key, member,
                                                            int(answers[2]), int(answers[3])))

    def _settle(self, conn: Counters, effect: EffectLike, now: float, grams: frozenset[int], key: str,
                member: str, version: int, size: int) -> SentEntry | Denial:
        mine = (member, Fingerprint.of(grams))
        with self._lock:
            known = self._known.setdefault(key, _Known(self.settings.duplicate_threshold))
            # Nobody added or took out an entry since our last look: ours is the only news.
            current = version == known.version + 1
            if current:
                known.version = version
                known.merge([(member, now)], mine)
                known.trim(now - self.window)
                current = len(known.entries) == size
            since = known.newest - SLACK_SECONDS if known.entries else None
        if not current:
            self._read(conn, key, since, version, mine, now)
        with self._lock:
            match = self._most_similar(grams, mine, known, now)
            if match is not None:
                known.drop(member)
        if match is None:
            return SentEntry(key, member)
        self._remove(conn, key, member)
        score, sent_at = match
        retry_after = seconds_until(sent_at + self.window, now)
        return Denial(
            "duplicate_content",
            f"{effect.platform} {effect.kind} refused: its text is {score:.0%} similar to one sent "
            f"{_ago(now - sent_at)} (texts {self.settings.duplicate_threshold:.0%} similar or more "
            f"are refused for {self.settings.duplicate_days} days); write something new",
            retry_after,
        )

    def _most_similar(
        self, grams: frozenset[int], mine: tuple[str, Fingerprint], known: _Known, now: float
    ) -> tuple[float, float] | None:
        threshold = self.settings.duplicate_threshold
        member, fingerprint = mine
        size, oldest = fingerprint.size, now - self.window
        best: tuple[float, float] | None = None
        for name in known.candidates(fingerprint):
            sent = known.entries[name]
            if name == member or sent.sent_at <= oldest:
                continue
            # As `similarity` computes it, with the bound in place of the overlap: never above.
            if 2 * fingerprint.overlap_bound(sent.print) / (size + sent.print.size) < threshold:
                continue
            score = similarity(grams, decode(sent.packed))
            if score >= threshold and (best is None or score > best[0]):
                best = (score, sent.sent_at)
        return best

    def _read(self, conn: Counters, key: str, since: float | None, version: int,
              mine: tuple[str, Fingerprint], now: float) -> None:
        """Fetch the entries sent since `since` (all when None) and the set's size; when the size
        is still not what we know, read every name again (only the new ones are fingerprinted)."""
        for window in (since, None) if since is not None else (None,):
            pipe = conn.pipeline(transaction=False)
            if window is None:
                pipe.zrange(key, 0, -1, withscores=True)
            else:
                pipe.zrangebyscore(key, window, "+inf", withscores=True)
            pipe.zcard(key)
            fetched, size = pipe.execute()
            with self._lock:
                known = self._known[key]
                if window is None:
                    known.keep_only({as_text(raw) for raw, _ in fetched})
                known.merge(list(fetched), mine)
                known.trim(now - self.window)
                if len(known.entries) == int(size) or window is None:
                    known.version = version
                    return

    def _remove(self, conn: Counters, key: str, member: str) -> None:
        pipe = conn.pipeline(transaction=False)
        pipe.zrem(key, member)
        pipe.incr(self.version_key(key))  # a change the other routers' guards must read
        _, version = pipe.execute()
        with self._lock:
            known = self._known.get(key)
            if known is not None:
                known.drop(member)
                if int(version) == known.version + 1:
                    known.version = int(version)

    def release(self, conn: Counters, entry: SentEntry) -> None:
        self._remove(conn, entry.key, entry.member)


def _ago(seconds: float) -> str:
    if seconds < 120:
        return "just now" if seconds < 1 else f"{seconds:.0f}s ago"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 2 * DAY:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / DAY:.0f} days ago"
