r"""Post length the way each platform counts it, and truncation on a grapheme boundary.

- Bluesky: 300 graphemes (extended grapheme clusters, so a family emoji is one) and at most
  3000 UTF-8 bytes (the record's `maxLength`; emoji-heavy text reaches it first).
- Mastodon: the instance's limit (500 by default) in graphemes, every URL counts 23, and a
  remote mention `@user@domain` counts as `@user`.
- X: 280 weighted: most Latin-range characters weigh 1, other characters (CJK, ...) 2, an
  emoji sequence 2, every URL 23 (twitter-text configuration v3).

Grapheme clusters are the `regex` module's `\X`, which follows a current Unicode: since Unicode
15.1 a Devanagari or Bengali conjunct (क्षि, ক্ষ্ম) is one cluster, and an older table (the
`grapheme` package's Unicode 13) would cut it after the virama.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import regex

BLUESKY_LIMIT = 300
BLUESKY_MAX_BYTES = 3000
MASTODON_DEFAULT_LIMIT = 500
X_LIMIT = 280
URL_WEIGHT = 23
ELLIPSIS = "…"

URL_PATTERN = re.compile(r"https?://[^\s<>\"]+", re.IGNORECASE)
_REMOTE_MENTION = re.compile(r"(?<![\w@])(@[A-Za-z0-9_]+)@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# Code point ranges twitter-text weighs as 1 (everything else weighs 2).
_X_LIGHT_RANGES = ((0, 4351), (8192, 8205), (8208, 8223), (8242, 8247))

Measure = Callable[[str], int]
_CLUSTER = regex.compile(r"\X")


def graphemes(text: str) -> list[str]:
    """The extended grapheme clusters of `text`, in order."""
    return _CLUSTER.findall(text)


def grapheme_length(text: str) -> int:
    return sum(1 for _ in _CLUSTER.finditer(text))


def bluesky_length(text: str) -> int:
    """Graphemes, or more than the limit when the text is over Bluesky's byte limit too."""
    if len(text.encode("utf-8")) > BLUESKY_MAX_BYTES:
        return BLUESKY_LIMIT + 1
    return grapheme_length(text)


def mastodon_length(text: str) -> int:
    """Characters as a Mastodon server counts them for its status length limit."""
    countable = URL_PATTERN.sub("x" * URL_WEIGHT, text)
    countable = _REMOTE_MENTION.sub(r"\1", countable)
    return grapheme_length(countable)


def _is_emoji_cluster(cluster: str) -> bool:
    if "\u200d" in cluster or "\ufe0f" in cluster:
        return True
    return any(0x1F000 <= ord(ch) <= 0x1FAFF or 0x2600 <= ord(ch) <= 0x27BF for ch in cluster)


def _x_cluster_weight(cluster: str) -> int:
    if _is_emoji_cluster(cluster):
        return 2
    weight = 0
    for ch in cluster:
        point = ord(ch)
        weight += 1 if any(low <= point <= high for low, high in _X_LIGHT_RANGES) else 2
    return weight


def x_weighted_length(text: str) -> int:
    """Weighted length as X (twitter-text v3) counts it against the 280 limit."""
    text = unicodedata.normalize("NFC", text)
    total = 0
    position = 0
    for match in URL_PATTERN.finditer(text):
        total += sum(_x_cluster_weight(c) for c in graphemes(text[position : match.start()]))
        total += URL_WEIGHT
        position = match.end()
    return total + sum(_x_cluster_weight(c) for c in graphemes(text[position:]))


def _cut_outside_urls(text: str, cut: int) -> int:
    """Move a cut (a code point index) back to the start of a URL it would split."""
    for match in URL_PATTERN.finditer(text):
        if match.start() < cut < match.end():
            return match.start()
    return cut


def truncate(text: str, limit: int, measure: Measure = grapheme_length) -> tuple[str, bool]:
    """`text` cut to fit `limit` as `measure` counts, on a grapheme boundary, with an ellipsis.

    Returns (text, truncated). A URL is never cut in half: it is dropped whole instead.
    """
    if measure(text) <= limit:
        return text, False
    clusters = graphemes(text)
    offsets = [0]
    for cluster in clusters:
        offsets.append(offsets[-1] + len(cluster))

    def candidate(count: int) -> str:
        cut = _cut_outside_urls(text, offsets[count])
        return text[:cut].rstrip() + ELLIPSIS

    low, high = 0, len(clusters)  # the largest count whose candidate fits, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if measure(candidate(middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    result = candidate(low)
    return (result if measure(result) <= limit else ""), True
