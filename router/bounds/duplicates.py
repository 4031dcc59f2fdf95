"""The duplicate-content guard: no text at least 90% similar to one sent in the last 7 days.

Similarity: the Sørensen-Dice coefficient of the sets of character trigrams of the normalised
texts, 2|A∩B| / (|A|+|B|). It is linear in the text's length, order-sensitive enough that a
reshuffled text is not "the same", and forgiving of a changed word: one word changed in a
100-character text scores about 0.93. Two sets can only reach the threshold t when their sizes
are within a ratio of t / (2 - t), so most stored texts are skipped by their size alone.

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
cannot both pass.

Incremental: a guard keeps the history it has read, decoded, and each check fetches only the
entries sent since its newest one (less `SLACK_SECONDS` for clocks and round trips between
routers) together with the set's size; when the size is not what it knows (an entry taken out,
or one it missed), it reads the whole history again.
"""

from __future__ import annotations

import base64
import re
import threading
import unicodedata
import uuid
import zlib
from array import array
from dataclasses import dataclass

from router.bounds import Counters, Denial, EffectLike, as_text, seconds_until
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
    text = _visible(unicodedata.normalize("NFKC", text)).casefold()
    text = _LINK.sub(" ", text)
    text = _visible(unicodedata.normalize("NFKD", text))
    return _NOT_WORD.sub(" ", text.translate(_LOOKALIKES)).strip()


def trigrams(text: str) -> frozenset[int]:
    """The CRC-32 of each character trigram of the normalised text without its spaces (the whole
    text if shorter)."""
    norm = normalise(text).replace(" ", "") or text.strip().casefold()  # all symbols or a bare link
    grams = {norm[i : i + 3] for i in range(max(1, len(norm) - 2))}
    return frozenset(zlib.crc32(gram.encode("utf-8")) for gram in grams)


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


PROFILE_BUCKETS = 64


def profile(grams: frozenset[int]) -> tuple[int, ...]:
    """How many of the trigram hashes fall in each of 64 buckets (by their low bits)."""
    counts = [0] * PROFILE_BUCKETS
    for gram in grams:
        counts[gram & (PROFILE_BUCKETS - 1)] += 1
    return tuple(counts)


def encode(grams: frozenset[int]) -> str:
    return base64.b64encode(array("I", sorted(grams)).tobytes()).decode("ascii")


def decode(text: str) -> frozenset[int]:
    values = array("I")
    values.frombytes(base64.b64decode(text))
    return frozenset(values)


class _Known:
    """One history as this guard last read it: member -> (trigram count, packed trigrams, sent at),
    the trigrams decoded on first use."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, str, float]] = {}
        self.decoded: dict[str, frozenset[int]] = {}
        self.profiles: dict[str, tuple[int, ...]] = {}
        self.newest = float("-inf")

    def merge(self, fetched: list[tuple[bytes | str, float]]) -> None:
        for raw, sent_at in fetched:
            name = as_text(raw)
            if name not in self.entries:
                _, size, packed = name.split("|", 2)
                self.entries[name] = (int(size), packed, float(sent_at))
            self.newest = max(self.newest, float(sent_at))

    def trim(self, oldest: float) -> None:
        for name in [n for n, entry in self.entries.items() if entry[2] < oldest]:
            self.drop(name)

    def drop(self, name: str) -> None:
        self.entries.pop(name, None)
        self.decoded.pop(name, None)
        self.profiles.pop(name, None)

    def grams(self, name: str) -> frozenset[int]:
        found = self.decoded.get(name)
        if found is None:
            found = self.decoded[name] = decode(self.entries[name][1])
        return found

    def profile(self, name: str) -> tuple[int, ...]:
        found = self.profiles.get(name)
        if found is None:
            found = self.profiles[name] = profile(self.grams(name))
        return found


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

    def take(self, conn: Counters, effect: EffectLike, now: float) -> SentEntry | Denial | None:
        published = effect.all_text  # a title or a link is published too
        if effect.kind not in ("post", "reply") or not published.strip():
            return None
        grams = trigrams(published)
        key = self.key(effect.platform)
        member = f"{uuid.uuid4().hex}|{len(grams)}|{encode(grams)}"
        with self._lock:
            known = self._known.get(key)
            since = None if known is None else known.newest - SLACK_SECONDS
        pipe = conn.pipeline(transaction=False)  # no MULTI: see router.queue.worker
        pipe.zremrangebyscore(key, "-inf", f"({now - self.window}")
        pipe.zadd(key, {member: now})
        if since is None:
            pipe.zrange(key, 0, -1, withscores=True)
        else:
            pipe.zrangebyscore(key, since, "+inf", withscores=True)
            pipe.zcard(key)
        pipe.expire(key, self.window + DAY)
        answers = pipe.execute()
        with self._lock:
            known = self._known.setdefault(key, _Known()) if since is None else self._known[key]
            if since is None:
                known.entries.clear()
                known.decoded.clear()
                known.profiles.clear()
            known.merge(list(answers[2]))
            known.trim(now - self.window)
            if since is not None and len(known.entries) != int(answers[3]):
                known = self._known[key] = _Known()  # an entry taken out, or one missed: read all
                reload = True
            else:
                reload = False
        if reload:
            everything: list[tuple[bytes | str, float]] = conn.zrange(key, 0, -1, withscores=True)  # type: ignore[assignment]
            with self._lock:
                known.merge(everything)
                known.trim(now - self.window)
        with self._lock:
            match = self._most_similar(grams, member, known, now)
            if match is not None:
                known.drop(member)
        if match is None:
            return SentEntry(key, member)
        conn.zrem(key, member)
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
        self, grams: frozenset[int], member: str, known: _Known, now: float
    ) -> tuple[float, float] | None:
        threshold = self.settings.duplicate_threshold
        ratio = threshold / (2 - threshold)  # Dice >= t needs min/max size >= t / (2 - t)
        best: tuple[float, float] | None = None
        mine: tuple[int, ...] | None = None
        for name, (size, _packed, sent_at) in known.entries.items():
            if name == member or sent_at <= now - self.window:
                continue
            small, large = sorted((len(grams), size))
            if large and small / large < ratio:
                continue
            mine = profile(grams) if mine is None else mine
            # The overlap is at most the sum of the smaller count in each hash bucket: when even
            # that cannot reach the threshold, the exact comparison is not needed.
            if 2 * sum(map(min, mine, known.profile(name))) < threshold * (len(grams) + size):
                continue
            score = similarity(grams, known.grams(name))
            if score >= threshold and (best is None or score > best[0]):
                best = (score, sent_at)
        return best

    def release(self, conn: Counters, entry: SentEntry) -> None:
        conn.zrem(entry.key, entry.member)
        with self._lock:
            known = self._known.get(entry.key)
            if known is not None:
                known.drop(entry.member)


def _ago(seconds: float) -> str:
    if seconds < 120:
        return "just now" if seconds < 1 else f"{seconds:.0f}s ago"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 2 * DAY:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / DAY:.0f} days ago"
