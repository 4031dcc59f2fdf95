"""A secret with its characters moved about: pairs swapped, every other character first, pieces
shuffled, any transposition. However they are moved, the same characters are there, each as
often: `AnagramSearch` looks for a stretch of a text's letters and digits (case-blind, escapes and
look-alikes undone, spaces and punctuation left out) exactly as long as a secret's that holds
exactly its characters. A random key's mix of letters and digits is its own: ordinary words never
make one.

A text that does not hold every character of a secret as often as the secret does is passed over
at once (a count, in C); otherwise only the windows around the secret's rarest character in it are
counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import accumulate

from protocol.redaction_views import identity
from protocol.spellings import decode, fold, skeleton

MIN_LENGTH = 16  # shorter secrets: too few characters for their mix to be their own
MIN_DISTINCT = 12  # nor a secret of few different characters ("aaaa…", "abab…")


class AnagramSearch:
    def __init__(self, secrets: Iterable[str]) -> None:
        self.targets: list[tuple[int, Counter[str]]] = []
        self.sums: list[tuple[int, int]] = []  # each target's sum of codes and of their squares
        for secret in secrets:
            view = skeleton(secret)[0]
            if len(view) >= MIN_LENGTH and len(set(view)) >= MIN_DISTINCT:
                self.targets.append((len(view), Counter(view)))
                self.sums.append((sum(map(ord, view)), sum(ord(c) * ord(c) for c in view)))

    def finds(self, text: str) -> bool:
        """Whether some stretch of `text`'s letters and digits is a secret's characters rearranged."""
        return bool(self.targets) and any(True for _ in self._windows(skeleton(decode(fold(text)[0])[0])[0]))

    def spans(self, text: str, plain: str | None = None) -> list[tuple[int, int]]:
        """Where in `text` such stretches are (from the first of their characters to the last);
        `plain`: the text already decoded and folded, when the caller has it."""
        plain = decode(fold(text)[0])[0] if plain is None else plain
        if not self.targets or not any(True for _ in self._windows(skeleton(plain)[0])):
            return []
        view, origin = skeleton(*decode(*fold(text, identity(text))))  # again, with where each came from
        assert origin is not None
        return [(origin[s][0], origin[s + length - 1][1]) for s, length in self._windows(view)]

    def _windows(self, view: str) -> Iterator[tuple[int, int]]:
        present = set(view)
        held: Counter[str] | None = None
        sums: tuple[list[int], list[int]] | None = None
        for (length, wanted), target_sums in zip(self.targets, self.sums, strict=True):
            if len(view) < length or not present.issuperset(wanted):
                continue
            held = Counter(view) if held is None else held
            if all(held[c] >= n for c, n in wanted.items()):
                if sums is None:  # running sums of the codes and their squares: a window's in O(1)
                    codes = [ord(c) for c in view]
                    sums = [0, *accumulate(codes)], [0, *accumulate(c * c for c in codes)]
                rarest = min(wanted, key=lambda c: held[c])
                found = _windows(view, length, wanted, rarest, sums, target_sums)
                yield from ((s, length) for s in found)


def _windows(
    view: str, length: int, wanted: Counter[str], rarest: str, sums: tuple[list[int], list[int]],
    target_sums: tuple[int, int],
) -> Iterator[int]:
    """The windows of `length` characters of `view` that hold exactly `wanted`: only those around
    the places of the character of the secret the text holds least, whose sums of codes and of
    their squares are the secret's, are counted."""
    one, two = target_sums
    first, second = sums
    starts: set[int] = set()
    at = view.find(rarest)
    while at >= 0:
        starts.update(range(max(0, at - length + 1), min(at, len(view) - length) + 1))
        at = view.find(rarest, at + 1)
    for s in sorted(starts):
        end = s + length
        if first[end] - first[s] == one and second[end] - second[s] == two and Counter(view[s:end]) == wanted:
            yield s
