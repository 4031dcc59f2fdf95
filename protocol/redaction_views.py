"""The views of a text the redactor reads besides the decoded one (as it was, as quoted-printable,
without white space), and the spans of a find: merged, and mapped from a view back to the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from protocol.spellings import MAX_ROUNDS, QUOTED_PRINTABLE, Origin, Span, decode

_SPACE = re.compile(r"\s")
_ESCAPE_SITE = re.compile(
    r"%[0-9A-Fa-f]{2}|%[uU][0-9A-Fa-f]{4}|&#|\\[uUx][0-9A-Fa-f{]|=[0-9A-Fa-f]{2}|0[xX][0-9A-Fa-f]"
)
QUOTED_SITES = 3
_ANY_ESCAPE = re.compile(r"[%&\\=]|0[xX]")  # what every escape holds
_SURROGATE = re.compile("[\ud800-\udfff]")

# The views read besides the decoded one: (name, quoted-printable rounds, spaces squeezed out).
OTHER_VIEWS = (("quoted", MAX_ROUNDS, False), ("quoted once", 1, False), ("compact", 0, True),
               ("compact quoted once", 1, True), ("everything", MAX_ROUNDS, True))  # fmt: skip


def other_views(folded: str, plain: str) -> dict[str, str]:
    """Also the text as it was; read as quoted-printable, when it holds a few `=XX` (one, as in
    `?ref=feed`, is far more often itself); and without white space, when that makes more
    escapes appear (`% 2 F`)."""
    views = {"undecoded": folded} if plain != folded else {}
    if not _ANY_ESCAPE.search(folded):
        return views
    texts = {folded, plain}
    squeezed = {_SPACE.sub("", t) for t in texts} if _SPACE.search(folded) else set()
    spaced = any(_sites(_SPACE.sub("", t)) > _sites(t) for t in texts) if squeezed else False
    quoted = any(len(QUOTED_PRINTABLE.findall(t)) >= QUOTED_SITES for t in texts)
    quoted_squeezed = spaced and any(len(QUOTED_PRINTABLE.findall(t)) >= QUOTED_SITES for t in squeezed)
    wanted = {
        "quoted": quoted,
        "quoted once": quoted,
        "compact": spaced,
        "compact quoted once": quoted_squeezed,
        "everything": quoted or spaced or plain != folded,  # escapes of spaces, QP deep inside
    }
    for name, rounds, squeeze in OTHER_VIEWS:
        if wanted[name]:
            views[name] = decode(folded, quoted=rounds, squeeze=squeeze)[0]
    return views


def _sites(text: str) -> int:
    """How many escapes the text holds."""
    return len(_ESCAPE_SITE.findall(text))


def searchable(text: str) -> str:
    """Half an emoji (a lone surrogate, which JSON can carry) cannot be searched: one U+FFFD in
    its place keeps every position."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def back(origin: Origin, start: int, end: int) -> Span:
    return origin[start][0], origin[end - 1][1]



def identity(text: str) -> Origin:
    return [(i, i + 1) for i in range(len(text))]


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged

