"""The one redactor: no loaded secret (or common token shape) leaves a SafeClaw process.

Used by the router (every reply, log line, dead letter and audit line, and `secret_in_text`
before a post) and by the agent (its logs and LLM provider errors). `Redactor.text()` replaces
with `[REDACTED]` every secret in the spellings a careless platform echoes it in
(`protocol.spellings` says which: escapes of any depth, look-alike and invisible characters,
spacing, punctuation and case, reversal, rot13, hex, base64 and base32 at any offset); a piece
of it, 8 characters or longer, as when the key is cut across fields; and token shapes
(`protocol.secret_shapes`). `value()` reads a JSON-like value's strings as one text too, in order,
so a key cut into short pieces across fields, list items, nested values or a key and its value
is found. `finds()` says whether a text holds any of these.

Speed: a text is searched with one Aho-Corasick automaton per view and one combined regex, and
the views are built without their character maps; only a text that holds something is read
again, with maps, to say where.
"""

from __future__ import annotations

import codecs
import functools
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

from protocol.blobs import blobs, rot47
from protocol.secret_shapes import TOKEN_PATTERNS, shape_spans
from protocol.spellings import (
    MAX_ROUNDS,
    QUOTED_PRINTABLE,
    Origin,
    Span,
    base64_cores,
    decode,
    fold,
    plain_form,
    skeleton,
    skeleton_needles,
)

__all__ = ["MIN_SECRET_LENGTH", "PIECE", "REDACTED", "TOKEN_PATTERNS", "RedactingFilter", "Redactor"]

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text; such a secret is refused at start
PIECE = 8  # a run of this many characters of a secret counts as the secret
# Shorter pieces of a secret count when together they spell most of it, in any order (a key cut
# into 6-character pieces and written backwards): pieces of GRAM characters covering COVERAGE of it.
GRAM = 5
COVERAGE = 0.75
_SPACE = re.compile(r"\s")
_ESCAPE_SITE = re.compile(
    r"%[0-9A-Fa-f]{2}|%[uU][0-9A-Fa-f]{4}|&#|\\[uUx][0-9A-Fa-f{]|=[0-9A-Fa-f]{2}|0[xX][0-9A-Fa-f]"
)
QUOTED_SITES = 3
_ANY_ESCAPE = re.compile(r"[%&\\=]|0[xX]")  # what every escape holds
_SURROGATE = re.compile("[\ud800-\udfff]")
_BASE64_TAIL = re.compile(r"[A-Za-z0-9+/_-]{0,2}={0,2}")  # the partial group and padding after a core


def is_distinctive(piece: str) -> bool:
    """A piece worth redacting on its own: two of lower case, upper case and digits (not a word
    such as the 'moltbook' or 'app-pass' of a key, which ordinary text holds too)."""
    kinds = [
        any(c.islower() for c in piece),
        any(c.isupper() for c in piece),
        any(c.isdigit() for c in piece),
    ]
    return sum(kinds) >= 2


class _Literals:
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
class _Tables:
    raw: _Literals  # searched in the text as it is
    plain: _Literals  # searched in the decoded view
    needles: AhoCorasick | None  # searched in skeletons
    encoded: frozenset[int]  # needles that are base64 cores (their tail is redacted too)
    grams: AhoCorasick | None  # every GRAM-character piece of each secret, lower-cased
    gram_places: tuple[tuple[tuple[int, int], ...], ...]  # for each gram: (secret, offset) it is at
    lengths: tuple[int, ...]  # each secret's length


@functools.lru_cache(maxsize=64)
def _tables(secrets: tuple[str, ...]) -> _Tables:
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
    return _Tables(
        raw=_Literals(raw_forms),
        plain=_Literals(sorted({plain_form(f) for f in raw_forms})),
        needles=AhoCorasick(ordered, matchkind=MatchKind.LeftmostLongest) if ordered else None,
        encoded=frozenset(i for i, n in enumerate(ordered) if n in cores),
        grams=AhoCorasick(list(grams), matchkind=MatchKind.Standard) if grams else None,
        gram_places=tuple(tuple(places) for places in grams.values()),
        lengths=tuple(len(s) for s in secrets),
    )


_Found = dict[int, list[Span]]  # a string's index -> where in it something secret is


def _identity(text: str) -> Origin:
    return [(i, i + 1) for i in range(len(text))]


def _merge(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _replace(text: str, spans: list[Span]) -> str:
    out, cursor = [], 0
    for start, end in _merge(spans):
        out += [text[cursor:start], REDACTED]
        cursor = end
    return "".join(out) + text[cursor:] if out else text


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.too_short = sorted(s for s in values if len(s) < MIN_SECRET_LENGTH)
        self._tables = _tables(tuple(s for s in values if len(s) >= MIN_SECRET_LENGTH))

    def text(self, text: str) -> str:
        return _replace(text, self._spans(text))

    def finds(self, text: str) -> bool:
        """True when the text holds a loaded secret (in any spelling above) or a secret shape."""
        return bool(self._spans(text))

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (keys included) redacted, the same shape back
        (tuples as lists, keys as strings)."""
        strings: list[str] = []
        columns: list[str | None] = []  # a value's keys from the top, list positions left out
        _collect(value, "", strings, columns)
        if not strings:
            return _rebuild(value, ())
        spans: _Found = {}
        # All strings in order (a key cut at a key and its value); the values alone (cut across
        # fields); and each field across list items (cut across posts).
        values = [i for i, column in enumerate(columns) if column is not None]
        self._spread(strings, list(range(len(strings))), spans, whole=True)
        if 1 < len(values) < len(strings):
            self._spread(strings, values, spans, whole=False)
        if len({columns[i] for i in values}) < len(values):  # a field repeats: items of a list
            by_column: dict[str | None, list[int]] = {}
            for i in values:
                by_column.setdefault(columns[i], []).append(i)
            for group in by_column.values():
                if 1 < len(group) < len(values):
                    self._spread(strings, group, spans, whole=False)
        if not spans:
            return _rebuild(value, strings)
        return _rebuild(value, [_replace(s, spans[i]) if i in spans else s for i, s in enumerate(strings)])

    def _spread(
        self, strings: list[str], group: list[int], spans: dict[int, list[Span]], whole: bool
    ) -> None:
        """Find in the group's strings joined by newlines; give each string its part of a find."""
        joined = "\n".join(strings[i] for i in group)
        found = self._spans(joined) if whole else self._skeleton_spans(joined, thorough=False)
        if not found:
            return
        offset = 0
        for i in group:
            end = offset + len(strings[i])
            mine = [
                (max(s, offset) - offset, min(e, end) - offset) for s, e in found if s < end and e > offset
            ]
            if mine:
                spans.setdefault(i, []).extend(mine)
            offset = end + 1

    def _spans(self, text: str) -> list[Span]:
        """Where in `text` something secret is: in every spelling, in pieces out of order, and
        inside any run that decodes to text holding one (the whole run)."""
        if len(text) < MIN_SECRET_LENGTH:
            return []
        text = _searchable(text)
        found = self._spelled_spans(text) + self._piece_spans(text)
        for blob in blobs(text):
            if any(self._spelled_spans(inner) or self._piece_spans(inner) for inner in blob.texts):
                found.append((blob.start, blob.end))
        return found

    def _piece_spans(self, text: str) -> list[Span]:
        """Pieces of one secret that together spell most of it, wherever and in whatever order.
        Most of it means most of the secret's characters, not of the text: an id that shares
        digits with a key, written twice, is not the key. A piece is redacted when it could
        identify the secret on its own (not a plain word such as the `secret` of `planted-secret`
        sitting elsewhere in the text)."""
        grams = self._tables.grams
        if grams is None or len(text) < 2 * GRAM:
            return []
        view, origin = (text.lower(), None) if text.isascii() else fold(text, _identity(text))
        view = view.lower()
        spans: dict[int, list[Span]] = {}
        covered: dict[int, set[int]] = {}
        for index, start, end in grams.find_matches_as_indexes(view, overlapping=True):
            for secret, offset in self._tables.gram_places[index]:
                spans.setdefault(secret, []).append((start, end))
                covered.setdefault(secret, set()).update(range(offset, offset + GRAM))
        found: list[Span] = []
        for secret, where in spans.items():
            if len(covered[secret]) < COVERAGE * self._tables.lengths[secret]:
                continue
            for s, e in _merge(where):
                start, end = (s, e) if origin is None else _back(origin, s, e)
                piece = text[start:end]
                if len(piece) >= PIECE or is_distinctive(piece) or not piece.isalnum():
                    found.append((start, end))
        return found

    def _spelled_spans(self, text: str) -> list[Span]:
        """Where in `text` a secret or a secret shape is, in every spelling (empty: nothing)."""
        if len(text) < MIN_SECRET_LENGTH:
            return []
        text = _searchable(text)
        tables = self._tables
        found = tables.raw.spans(text) + shape_spans(text)
        folded = fold(text)[0]
        plain = decode(folded)[0]
        if plain != text and (tables.plain.spans(plain) or shape_spans(plain)):
            plain_view, origin = decode(*fold(text, _identity(text)))
            assert origin is not None
            found += [
                _back(origin, s, e) for s, e in tables.plain.spans(plain_view) + shape_spans(plain_view)
            ]
        return found + self._skeleton_spans(text, folded, plain)

    def _skeleton_spans(
        self, text: str, folded: str | None = None, plain: str | None = None, thorough: bool = True
    ) -> list[Span]:
        """Finds in the skeleton of the decoded text; `thorough`: also of the text undecoded, read
        as quoted-printable, and without its spaces (a text that joins strings already read one
        by one needs only the first)."""
        needles = self._tables.needles
        if needles is None or len(text) < MIN_SECRET_LENGTH:
            return []
        text = _searchable(text)
        folded = fold(text)[0] if folded is None else folded
        plain = decode(folded)[0] if plain is None else plain
        views = {"decoded": plain}
        if thorough:
            views |= _other_views(folded, plain)
        hits = [name for name, view in views.items() if needles.find_matches_as_indexes(skeleton(view)[0])]
        found = []
        for name in hits:
            view, origin = fold(text, _identity(text))
            if name != "undecoded":
                _, quoted, squeeze = next((v for v in _OTHER_VIEWS if v[0] == name), ("", 0, False))
                view, origin = decode(view, origin, quoted=quoted, squeeze=squeeze)
            view, origin = skeleton(view, origin)
            assert origin is not None
            for index, start, end in needles.find_matches_as_indexes(view):
                span = _back(origin, start, end)
                if index in self._tables.encoded:
                    tail = _BASE64_TAIL.match(text, span[1])
                    span = (span[0], tail.end() if tail else span[1])
                found.append(span)
        return found


# The views read besides the decoded one: (name, quoted-printable rounds, spaces squeezed out).
_OTHER_VIEWS = (("quoted", MAX_ROUNDS, False), ("quoted once", 1, False), ("compact", 0, True),
                ("compact quoted once", 1, True), ("everything", MAX_ROUNDS, True))  # fmt: skip


def _other_views(folded: str, plain: str) -> dict[str, str]:
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
    for name, rounds, squeeze in _OTHER_VIEWS:
        if wanted[name]:
            views[name] = decode(folded, quoted=rounds, squeeze=squeeze)[0]
    return views


def _sites(text: str) -> int:
    """How many escapes the text holds."""
    return len(_ESCAPE_SITE.findall(text))


def _searchable(text: str) -> str:
    """Half an emoji (a lone surrogate, which JSON can carry) cannot be searched: one U+FFFD in
    its place keeps every position."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def _back(origin: Origin, start: int, end: int) -> Span:
    return origin[start][0], origin[end - 1][1]


def _collect(node: Any, column: str, strings: list[str], columns: list[str | None]) -> None:
    if isinstance(node, str):
        strings.append(node)
        columns.append(column)
    elif isinstance(node, dict):
        for key, item in node.items():
            name = key if isinstance(key, str) else str(key)
            strings.append(name)
            columns.append(None)
            _collect(item, f"{column}\0{name}", strings, columns)
    elif isinstance(node, list | tuple):
        for item in node:
            _collect(item, column, strings, columns)


def _rebuild(node: Any, strings: Iterable[str]) -> Any:
    it = iter(strings)

    def build(node: Any) -> Any:
        if isinstance(node, str):
            return next(it)
        if isinstance(node, dict):
            return {next(it): build(item) for item in node.values()}
        if isinstance(node, list | tuple):
            return [build(item) for item in node]
        return node

    return build(node)


class RedactingFilter(logging.Filter):
    """Attach to a handler: the formatted message, traceback and stack are redacted in place."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError) as exc:
            message = f"{record.msg!r} (bad log arguments: {exc})"
        record.msg = self.redactor.text(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True
