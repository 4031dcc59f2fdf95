"""The duplicate-content guard: no text at least 90% similar to one sent in the last 7 days.

Similarity: the Sørensen-Dice coefficient of the sets of character trigrams of the normalised
texts, 2|A∩B| / (|A|+|B|). It is linear in the text's length, order-sensitive enough that a
reshuffled text is not "the same", and forgiving of a changed word: one word changed in a
100-character text scores about 0.93. Two sets can only reach the threshold t when their sizes
are within a ratio of t / (2 - t) (the fingerprints' bound below, never above the smaller size,
rules the others out too).

Normalising and trigrams: `router.bounds.text_trigrams`; fingerprints: `router.bounds.fingerprints`.

Stored: no text, only each trigram's 32-bit CRC (sorted, base64) in a sorted set per platform
(or one for all, ROUTER_DUPLICATE_SCOPE=all) scored by the send time; entries older than the
window are trimmed on every check, and the key's TTL ends a quiet platform's history. As in
`pacing`, a check adds its own entry before it reads, so two similar texts racing on two routers
cannot both pass (of two racing checks, the one counted second sees the counter jump and reads
the other's entry). Racing copies may also all see each other and all be refused (fail closed):
each takes its entry out again, so the same words sent once more pass.

Incremental: a guard keeps the history it has read, each text fingerprinted once when first
read (`Fingerprint`: its trigram count and which of 2,048 buckets its trigrams fall in). Beside
each history a change counter (`<key>:version`) goes up by one with each entry added or taken
out. A check adds its entry and counts it in one round trip: when the counter says ours was the
only change since this guard's last look, and the set's size agrees, nothing is read. Otherwise
it fetches the entries sent since its newest one (less `SLACK_SECONDS` for clocks and round trips
between routers), the set's size and the ids of the entries taken out lately (`<key>:removed`,
the newest `REMOVED_KEPT`), and when the size still disagrees (one missed) it reads every name
again, fingerprinting only the new ones. A check then compares
the new text's fingerprint with each kept one, an AND and a bit count: only a text whose bound on
the shared trigrams can reach the threshold is decoded and compared exactly.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

from router.bounds import Counters, Denial, EffectLike, Staged, as_text, seconds_until
from router.bounds.fingerprints import Fingerprint, KnownHistory
from router.bounds.settings import BoundsSettings
from router.bounds.text_trigrams import decode, encode, similarity, trigrams

DAY = 24 * 3600
SLACK_SECONDS = 300.0  # another router's entry may carry a send time this far behind ours
REMOVED_KEPT = 256  # ids of entries taken out, kept for the other routers' guards to drop them


@dataclass(frozen=True)
class SentEntry:
    """This command's text in the history; `release` takes it out when the text was not sent."""

    key: str
    member: str


class DuplicateGuard:
    def __init__(self, settings: BoundsSettings, prefix: str) -> None:
        self.settings = settings
        self.prefix = prefix  # e.g. "{safeclaw}:router:sent:"
        self.window = settings.duplicate_days * DAY
        self._known: dict[str, KnownHistory] = {}
        self._lock = threading.Lock()

    def key(self, platform: str) -> str:
        return f"{self.prefix}{'all' if self.settings.duplicate_scope == 'all' else platform}"

    @staticmethod
    def version_key(key: str) -> str:
        """A history's change counter: one more for each entry added or taken out."""
        return f"{key}:version"

    @staticmethod
    def removed_key(key: str) -> str:
        """The ids of the entries last taken out of a history, newest first."""
        return f"{key}:removed"

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
            known = self._known.setdefault(key, KnownHistory(self.settings.duplicate_threshold))
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
        self, grams: frozenset[int], mine: tuple[str, Fingerprint], known: KnownHistory, now: float
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
        """Fetch the entries sent since `since` (all when None), the set's size and the entries
        taken out lately; when the size is still not what we know, read every name again (only
        the new ones are fingerprinted)."""
        for window in (since, None) if since is not None else (None,):
            pipe = conn.pipeline(transaction=False)
            if window is None:
                pipe.zrange(key, 0, -1, withscores=True)
            else:
                pipe.zrangebyscore(key, window, "+inf", withscores=True)
            pipe.zcard(key)
            pipe.lrange(self.removed_key(key), 0, -1)
            fetched, size, removed = pipe.execute()
            with self._lock:
                known = self._known[key]
                if window is None:
                    known.keep_only({as_text(raw) for raw, _ in fetched})
                else:
                    gone = {as_text(raw) for raw in removed}
                    known.keep_only({name for name in known.entries if name.split("|", 1)[0] not in gone})
                known.merge(list(fetched), mine)
                known.trim(now - self.window)
                if len(known.entries) == int(size) or window is None:
                    known.version = version
                    return

    def _remove(self, conn: Counters, key: str, member: str) -> None:
        pipe = conn.pipeline(transaction=False)
        pipe.zrem(key, member)
        # Which entry went, for the other routers' guards to drop it without reading all names.
        pipe.lpush(self.removed_key(key), member.split("|", 1)[0])
        pipe.ltrim(self.removed_key(key), 0, REMOVED_KEPT - 1)
        pipe.expire(self.removed_key(key), self.window + DAY)
        pipe.incr(self.version_key(key))  # a change the other routers' guards must read
        version = pipe.execute()[-1]
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
