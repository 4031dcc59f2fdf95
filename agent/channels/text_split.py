"""Split a long reply into messages a chat service accepts: on paragraphs, then sentences, then words.

Telegram counts a message's length in UTF-16 code units (an emoji outside the BMP counts twice), so
lengths here are measured the same way.
"""

from __future__ import annotations

import re

TELEGRAM_MESSAGE_LIMIT = 4096

# Where a chunk may end, best first. Each match's end is the cut point.
_BOUNDARIES = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraph: a blank line
    re.compile(r"(?<=[.!?…:;])[\"')\]]*\s+|\n"),  # sentence end (or a line break)
    re.compile(r"\s+"),  # word
)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _longest_fitting_prefix(text: str, limit: int) -> int:
    """How many characters of `text` fit in `limit` UTF-16 units."""
    if utf16_length(text) <= limit:
        return len(text)
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)


def _cut_point(window: str, min_cut: int) -> int | None:
    """The end of the last boundary in `window`, trying paragraphs, then sentences, then words."""
    for pattern in _BOUNDARIES:
        ends = [m.end() for m in pattern.finditer(window) if m.start() >= min_cut]
        if ends:
            return ends[-1]
    return None


def split_message(text: str, limit: int = TELEGRAM_MESSAGE_LIMIT) -> list[str]:
    """Chunks of at most `limit` UTF-16 units, in order, cut at the best boundary available.

    Whitespace at a cut is dropped; a word longer than `limit` is cut hard. Blank text → [].
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    chunks: list[str] = []
    rest = text.strip()
    while rest:
        fits = _longest_fitting_prefix(rest, limit)
        if fits == len(rest):
            chunks.append(rest)
            break
        # Look one character past the fitting prefix: whitespace right there is a clean cut.
        cut = _cut_point(rest[: fits + 1], min_cut=max(1, fits // 4)) or fits
        chunk = rest[:cut].rstrip()
        if not chunk:  # only whitespace fitted before the cut: cut hard
            chunk, cut = rest[:fits], fits
        chunks.append(chunk)
        rest = rest[cut:].lstrip()
    return chunks
