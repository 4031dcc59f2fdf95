"""A secret with its characters moved about: pairs swapped, every other character first, pieces
shuffled, any transposition. However they are moved, the same characters are there, each as
often: `AnagramSearch` looks for a stretch of a text's letters and digits (case-blind, escapes and
look-alikes undone, spaces and punctuation left out) exactly as long as a secret's that holds
exactly its characters. A random key's mix of letters and digits is its own: ordinary words never
make one.

It reads a text a character at a time, so it is for the router's outbound check of a write (a
post's words, once per command), not for every reply; a text that does not hold every character
of a secret as often as the secret does is passed over at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from protocol.spellings import decode, fold, skeleton

MIN_LENGTH = 16  # shorter secrets: too few characters for their mix to be their own
MIN_DISTINCT = 12  # nor a secret of few different characters ("aaaa…", "abab…")


class AnagramSearch:
    def __init__(self, secrets: Iterable[str]) -> None:
        self.targets: list[tuple[int, Counter[str]]] = []
        for secret in secrets:
            view = skeleton(secret)[0]
            if len(view) >= MIN_LENGTH and len(set(view)) >= MIN_DISTINCT:
                self.targets.append((len(view), Counter(view)))

    def finds(self, text: str) -> bool:
        """Whether some stretch of `text`'s letters and digits is a secret's characters rearranged."""
        if not self.targets:
            return False
        view = skeleton(decode(fold(text)[0])[0])[0]
        held = Counter(view)
        for length, wanted in self.targets:
            enough = len(view) >= length and all(held[c] >= n for c, n in wanted.items())
            if enough and _window(view, length, wanted, min(wanted, key=lambda c: held[c])):
                return True
        return False


def _window(view: str, length: int, wanted: Counter[str], rarest: str) -> bool:
    """Whether a window of `length` characters of `view` holds exactly `wanted`: only the windows
    around the places of the character of the secret the text holds least are counted."""
    starts: set[int] = set()
    at = view.find(rarest)
    while at >= 0:
        starts.update(range(max(0, at - length + 1), min(at, len(view) - length) + 1))
        at = view.find(rarest, at + 1)
    return any(Counter(view[s : s + length]) == wanted for s in sorted(starts))
