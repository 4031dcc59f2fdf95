"""How much of one text is another's: the measure behind "no bullet merely restates the post".

Both texts are normalised first, so surface changes do not hide a copy: NFKC (full-width and
styled letters), format characters (zero-width, bidi) dropped, case folded, accents dropped,
the Cyrillic and Greek letters that look Latin mapped to Latin, every run of punctuation,
symbols (emoji) and spaces made one space, citations and links removed, and each word cut to a
rough stem (accepted/accepting/accepts → accept).

Then the largest of: the character sequence ratio (a light rewording), the word-set overlap
(the same words reordered), and, for posts of at least CONTAINMENT_MIN_WORDS content words,
containment (the post copied inside a longer bullet): the share of the post's words the bullet
repeats in the post's order, or, reordered, nearly all (UNORDERED_SHARE) of its content words.
A background bullet fairly repeats a short post's key terms, but not the post.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

CONTAINMENT_MIN_WORDS = 5
UNORDERED_SHARE = 0.85
_LOOKALIKES = str.maketrans("авеёкмнорстухіјѕԁԛԝαβεικνορτυχγ", "abeekmhopctyxijsdqwabeikvoptuxy")
_NOT_WORD = re.compile(r"[\W_]+")
_CITATION_OR_LINK = re.compile(r"\[[^\[\]]{0,20}\]|\^\d+|(?:https?|at)://\S+|www\.\S+", re.IGNORECASE)
_SUFFIXES = ("ing", "ed", "es", "s", "ly")
# Words that carry no content: they make two unrelated sentences look alike.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    ]
)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", _CITATION_OR_LINK.sub(" ", unicodedata.normalize("NFKC", text)))
    text = "".join(c for c in text if unicodedata.category(c) != "Cf").casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _NOT_WORD.sub(" ", text.translate(_LOOKALIKES)).strip()


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2]:  # shipp(ed) → ship
        word = word[:-1]
    return word


def stems(text: str) -> list[str]:
    return [_stem(word) for word in normalise(text).split()]


def similarity(bullet: str, post_text: str) -> float:
    """How much of `bullet` is the post's own text, 0..1 (citations, links and punctuation ignored)."""
    a, b = normalise(bullet), normalise(post_text)
    if not a or not b:
        return 0.0
    if len(a) >= 20 and (a in b or b in a):
        return 1.0
    words_a, words_b = set(stems(a)), set(stems(b))
    overlap = len(words_a & words_b) / len(words_a | words_b)
    ratio = SequenceMatcher(None, a, b, autojunk=False).ratio()
    content_b = words_b - _STOPWORDS
    if len(content_b) < CONTAINMENT_MIN_WORDS:
        return max(ratio, overlap)
    post_stems = stems(b)
    in_order = _common_subsequence(post_stems, stems(a)) / len(post_stems)
    unordered = len(content_b & words_a) / len(content_b)
    return max(ratio, overlap, in_order, unordered if unordered >= UNORDERED_SHARE else 0.0)


def _common_subsequence(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of two word lists."""
    previous = [0] * (len(b) + 1)
    for word in a:
        current = [0]
        for j, other in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if word == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]
