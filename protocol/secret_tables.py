"""What the redactor searches for, built once per set of secrets: each secret as written, reversed
and turned (rot13, rot47) with its distinctive pieces, the same in decoded form, the skeleton
needles of every spelling `protocol.spellings` knows, and the short pieces ("grams") that together
spell most of a secret.
"""

from __future__ import annotations

import codecs
import functools
from dataclasses import dataclass

from ahocorasick_rs import AhoCorasick, MatchKind

from protocol.blobs import rot47
from protocol.spellings import Span, base64_cores, plain_form, skeleton, skeleton_needles

PIECE = 8  # a run of this many characters of a secret counts as the secret
# Shorter pieces of a secret count when together they spell most of it, in any order (a key cut
# into 6-character pieces and written backwards): pieces of GRAM characters covering COVERAGE of it.
GRAM = 5
COVERAGE = 0.75


def is_distinctive(piece: str) -> bool:
    """A piece worth redacting on its own: two of lower case, upper case and digits (not a word
    such as the 'moltbook' or 'app-pass' of a key, which ordinary text holds too)."""
    kinds = [
        any(c.islower() for c in piece),
        any(c.isupper() for c in piece),
        any(c.isdigit() for c in piece),
    ]
    return sum(kinds) >= 2


def distinctive_cover(secret: str) -> int:
    """How many characters of a secret its distinctive GRAM-character pieces cover."""
    starts = [i for i in range(len(secret) - GRAM + 1) if is_distinctive(secret[i : i + GRAM])]
    return len({i for start in starts for i in range(start, start + GRAM)})


class Literals:
    """Secrets as written (and reversed, and in rot13) and their distinctive pieces, searched
    case for case; other cases are found in the skeleton."""

    def __init__(self, forms: list[str]) -> None:
        patterns = {form: form for form in forms}
        for form in forms:
            for i in range(len(form) - PIECE + 1):
                piece = form[i : i + PIECE]
                if len(form) > PIECE and is_distinctive(piece):
                    patterns.setdefault(piece, form)
        self.patterns = list(patterns)
        self.source = list(patterns.values())  # the form a piece is widened within
        self.automaton = AhoCorasick(self.patterns, matchkind=MatchKind.LeftmostLongest) if patterns else None

    def spans(self, view: str) -> list[Span]:
        if self.automaton is None:
            return []
        found = []
        for index, start, end in self.automaton.find_matches_as_indexes(view):
            source = self.source[index]
            while end < len(view) and view[start : end + 1] in source:
                end += 1
            while start > 0 and view[start - 1 : end] in source:
                start -= 1
            found.append((start, end))
        return found


@dataclass(frozen=True)
class SecretTables:
    raw: Literals  # searched in the text as it is
    plain: Literals  # searched in the decoded view
    needles: AhoCorasick | None  # searched in skeletons
    encoded: frozenset[int]  # needles that are base64 cores (their tail is redacted too)
    grams: AhoCorasick | None  # every GRAM-character piece of each secret, lower-cased
    gram_places: tuple[tuple[tuple[int, int], ...], ...]  # for each gram: (secret, offset) it is at
    lengths: tuple[int, ...]  # each secret's length


@functools.lru_cache(maxsize=64)
def build_tables(secrets: tuple[str, ...]) -> SecretTables:
    turned = [codecs.encode(s, "rot13") for s in secrets] + [rot47(s) for s in secrets]
    raw_forms = [form for s in (*secrets, *turned) for form in (s, s[::-1])]
    needles: set[str] = set()
    cores: set[str] = set()
    for secret in secrets:
        needles |= skeleton_needles(secret)
        cores |= {skeleton(core)[0] for core in base64_cores(secret.encode("utf-8"))}
    ordered = sorted(needles)
    grams: dict[str, list[tuple[int, int]]] = {}
    for index, secret in enumerate(secrets):
        if len(secret) >= 2 * GRAM + 2:
            lowered = secret.lower()
            for i in range(len(lowered) - GRAM + 1):
                grams.setdefault(lowered[i : i + GRAM], []).append((index, i))
    return SecretTables(
        raw=Literals(raw_forms),
        plain=Literals(sorted({plain_form(f) for f in raw_forms})),
        needles=AhoCorasick(ordered, matchkind=MatchKind.LeftmostLongest) if ordered else None,
        encoded=frozenset(i for i, n in enumerate(ordered) if n in cores),
        grams=AhoCorasick(list(grams), matchkind=MatchKind.Standard) if grams else None,
        gram_places=tuple(tuple(places) for places in grams.values()),
        lengths=tuple(len(s) for s in secrets),
    )
