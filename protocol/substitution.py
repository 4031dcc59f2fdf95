"""A secret under a letter-for-letter substitution: a Caesar shift of any size, Atbash, a shifted
keyboard row, or each letter swapped for a look-alike from an alphabet no table lists (Lisu,
Cherokee, Canadian syllabics...). No list of such maps is complete, but every one of them keeps
the secret's pattern of repeats: which of its characters equal which. `SubstitutionSearch` looks
for that pattern in each word of a text long enough to hold the secret, case-blind and case for
case (a map of the capitals alone keeps the case-for-case pattern, not the case-blind one).

A pattern only says something when the secret repeats itself: a secret of at least MIN_LENGTH
characters with at least MIN_REPEATS repeated characters is searched; with fewer, a window of
ordinary text could match by chance (the other views and the hold signal still read it).
"""

from __future__ import annotations

import functools
import operator
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

Span = tuple[int, int]
MIN_LENGTH = 16
MIN_REPEATS = 2
_DROPPED = frozenset({"Mn", "Me", "Cf"})  # combining marks and invisible characters: not letters


def _view(token: str) -> tuple[str, list[int]]:
    """The token without its invisible characters, and where each character came from."""
    if token.isascii():
        return token, list(range(len(token)))
    kept = [(c, i) for i, c in enumerate(token) if unicodedata.category(c) not in _DROPPED]
    return "".join(c for c, _ in kept), [i for _, i in kept]


def _blind(view: str) -> str:
    return view.lower() if view.isascii() else "".join(c.lower()[:1] for c in view)


def repeats(text: str) -> list[int]:
    """For each character: how far back the same character was last seen (0: not before)."""
    last: dict[str, int] = {}
    out = []
    for i, char in enumerate(text):
        out.append(i - last[char] if char in last else 0)
        last[char] = i
    return out


def _distance(back: int) -> str:
    return chr(0x100 + back)


@dataclass(frozen=True)
class _Pattern:
    """A secret's `repeats` as a regex over a word's `repeats` (each distance a character): a
    window matches when each repeat of the secret is one of the window at the same distance, and
    each first occurrence in the secret is one in the window (seen never, or before the window)."""

    length: int
    distinct: int  # how many different characters the secret has: a word with fewer holds none
    anchor: int  # the secret's first repeat: where a window's search starts
    distance: int  # ... how far back it repeats
    step: str  # ... that distance as a character
    regex: re.Pattern[str]

    @classmethod
    def of(cls, back: tuple[int, ...]) -> _Pattern:
        parts = []
        for j, want in enumerate(back):
            if want:
                parts.append(re.escape(_distance(want)))
            else:
                parts.append(f"[^{_distance(1)}-{_distance(j)}]" if j > 0 else ".")
        distinct = sum(1 for want in back if not want)
        anchor = next(j for j, want in enumerate(back) if want)
        regex = re.compile("".join(parts), re.DOTALL)
        return cls(len(back), distinct, anchor, back[anchor], _distance(back[anchor]), regex)

    def starts(self, back: str) -> Iterator[int]:
        """Where in a word (its `repeats`, as characters) a window with this pattern starts: only
        where the word repeats a character at the distance the secret first does."""
        at = back.find(self.step, self.anchor)
        while at >= 0:
            start = at - self.anchor
            if start + self.length > len(back):
                return
            if self.regex.match(back, start):
                yield start
            at = back.find(self.step, at + 1)


class SubstitutionSearch:
    def __init__(self, secrets: Iterable[str]) -> None:
        patterns: dict[bool, set[_Pattern]] = {True: set(), False: set()}  # by case-blind or not
        for secret in secrets:
            view = _view("".join(secret.split()))[0]
            for blind in (True, False):
                back = tuple(repeats(_blind(view) if blind else view))
                if len(view) >= MIN_LENGTH and sum(1 for b in back if b) >= MIN_REPEATS:
                    patterns[blind].add(_Pattern.of(back))
        self.patterns = {blind: tuple(found) for blind, found in patterns.items() if found}
        shortest = min((p.length for found in self.patterns.values() for p in found), default=0)
        self.words = re.compile(rf"\S{{{shortest},}}")  # the words that can hold one

    def spans(self, text: str) -> list[Span]:
        """Where `text` holds a secret under some letter-for-letter substitution."""
        if not self.patterns:
            return []
        found: list[Span] = []
        for word in self.words.finditer(text):
            offset = word.start()
            found += [(offset + s, offset + e) for s, e in self._token_spans(word.group())]
        return found

    def _token_spans(self, token: str) -> list[Span]:
        view, origin = _view(token)
        found = []
        backs: dict[str, str] = {}  # a word in one case is read once for both
        for blind, patterns in self.patterns.items():
            read = _blind(view) if blind else view
            distinct = len(set(read))
            # Cheap necessary conditions, read in C: enough different characters, and somewhere
            # two equal ones as far apart as the secret's first repeat.
            fit = [p for p in patterns if p.distinct <= distinct and p.length <= len(read)]
            apart = {d for d in {p.distance for p in fit} if any(map(operator.eq, read, read[d:]))}
            fit = [p for p in fit if p.distance in apart]
            if not fit:
                continue
            back = backs.get(read) or backs.setdefault(read, "".join(map(_distance, repeats(read))))
            for pattern in fit:
                for start in pattern.starts(back):
                    found.append((origin[start], origin[start + pattern.length - 1] + 1))
        return found


@functools.lru_cache(maxsize=64)
def substitution_search(secrets: tuple[str, ...]) -> SubstitutionSearch:
    """The search for these secrets, built once (a redactor is made per settings, often)."""
    return SubstitutionSearch(secrets)
