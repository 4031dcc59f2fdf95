"""A key cut across several posts: each post holds a piece too short to count as the key (a few
characters of it), and together they spell it. The router keeps, for a week, where in each of
its own credentials the pieces it was asked to publish start (places only: never a text, never
the key), and refuses a write whose pieces would bring what was published of one credential to
most of what such pieces can cover of it (`COVERAGE`, the share the redactor needs within one
text; the `moltbook_sk_` every such key starts with is no secret and is not counted).

Only pieces that mix letters and digits count: a word of a key (`moltbook`, `pass`) is everyone's.
The places are counted at the check, also for a write refused or held later: a piece that was
ever offered for publishing counts as published (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from protocol.redaction import Redactor
from protocol.secret_tables import COVERAGE, GRAM

WINDOW_SECONDS = 7 * 86_400


class PublishedPieces:
    def __init__(self, redactor: Redactor, prefix: str) -> None:
        self.redactor = redactor
        self.prefix = f"{prefix}secret_pieces:"

    def completes_a_secret(self, texts: Iterable[str], conn: Any, now: float) -> bool:
        """Whether these texts, with the pieces offered in the window before, spell most of one of
        the router's credentials; their pieces are recorded either way."""
        found = self.redactor.piece_places("\n".join(t for t in texts if t))
        if not found or conn is None:
            return False
        pipe = conn.pipeline(transaction=False)
        for name, (_length, places) in found.items():
            key = self.prefix + name
            pipe.zremrangebyscore(key, 0, now - WINDOW_SECONDS)
            pipe.zrange(key, 0, -1)
            pipe.zadd(key, {str(place): now for place in places})
            pipe.expire(key, WINDOW_SECONDS)
        answers = pipe.execute()
        for n, (coverable, places) in enumerate(found.values()):
            before = {int(p) for p in map(_text, answers[4 * n + 1]) if p.isdigit()}
            covered = {i for start in before | places for i in range(start, start + GRAM)}
            if coverable and len(covered) >= COVERAGE * coverable:
                return True
        return False


def _text(member: Any) -> str:
    return member.decode("ascii", "replace") if isinstance(member, bytes) else str(member)
