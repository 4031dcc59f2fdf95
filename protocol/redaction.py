"""The one redactor: no loaded secret (or common token shape) leaves a SafeClaw process.

Used by the router (every reply, log line, dead letter and audit line, and `secret_in_text`
before a post) and by the agent (its logs and LLM provider errors). `Redactor.text()` replaces
with `[REDACTED]` every secret in the spellings a careless platform echoes it in
(`protocol.spellings` says which: escapes of any depth, look-alike and invisible characters,
spacing, punctuation and case, reversal, rot13, hex, base64 and base32 at any offset; under any
letter-for-letter substitution, `protocol.substitution`); a piece of it, 8 characters or longer,
as when the key is cut across fields; and token shapes
(`protocol.secret_shapes`). `value()` reads a JSON-like value's strings as one text too, in order
(a key cut across fields, list items, nested values or a key and its value). `finds()` says
whether a text holds any of these.

Speed: a text is searched with one Aho-Corasick automaton per view and one combined regex, and
the views are built without their character maps; only a text that holds something is read
again, with maps, to say where. What is searched for is built in `protocol.secret_tables`, the
other views in `protocol.redaction_views`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from typing import Any

from protocol.anagram import AnagramSearch
from protocol.blobs import blobs
from protocol.redaction_views import OTHER_VIEWS, back, identity, merge_spans, other_views, searchable
from protocol.secret_shapes import TOKEN_PATTERNS, shape_spans
from protocol.secret_tables import COVERAGE, GRAM, PIECE, build_tables, distinctive_cover, is_distinctive
from protocol.spellings import MIN_PLAIN_NEEDLE, Span, decode, fold, skeleton
from protocol.substitution import substitution_search
from protocol.value_strings import collect_strings, rebuild

__all__ = ["MIN_SECRET_LENGTH", "PIECE", "REDACTED", "TOKEN_PATTERNS", "RedactingFilter", "Redactor"]

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text; such a secret is refused at start
STRIDES = (2, 3)  # one or two filler characters between a secret's characters
_WORD = re.compile(r"\S+")
_BASE64_TAIL = re.compile(r"[A-Za-z0-9+/_-]{0,2}={0,2}")  # the partial group and padding after a core

_Found = dict[int, list[Span]]  # a string's index -> where in it something secret is


def _replace(text: str, spans: list[Span]) -> str:
    out, cursor = [], 0
    for start, end in merge_spans(spans):
        out += [text[cursor:start], REDACTED]
        cursor = end
    return "".join(out) + text[cursor:] if out else text


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.too_short = sorted(s for s in values if len(s) < MIN_SECRET_LENGTH)
        searched = tuple(s for s in values if len(s) >= MIN_SECRET_LENGTH)
        self._tables = build_tables(searched)
        self._names = tuple(hashlib.sha256(b"secret\0" + s.encode()).hexdigest()[:16] for s in searched)
        self._coverable = tuple(map(distinctive_cover, searched))
        self._substituted = substitution_search(searched)
        self._anagrams = AnagramSearch(searched)

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
        collect_strings(value, "", strings, columns)
        if not strings:
            return rebuild(value, ())
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
            return rebuild(value, strings)
        return rebuild(value, [_replace(s, spans[i]) if i in spans else s for i, s in enumerate(strings)])

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
        text = searchable(text)
        found = self._spelled_spans(text) + self._piece_spans(text) + self._substituted.spans(text)
        for blob in blobs(text):
            if any(self._spelled_spans(inner) or self._piece_spans(inner) for inner in blob.texts):
                found.append((blob.start, blob.end))
        return found

    def rearranged(self, text: str) -> bool:
        """Whether `text` holds a secret's characters moved about (`protocol.anagram`)."""
        return self._anagrams.finds(text)

    def piece_places(self, text: str) -> dict[str, tuple[int, frozenset[int]]]:
        """For each secret (by a name that says nothing of it): how many of its characters such
        pieces can cover, and where in it the GRAM-character pieces of it that `text` holds start;
        only pieces that mix lower case, upper case or digits (`is_distinctive`: a word such as the
        `moltbook` of a key is everyone's).
        What a ledger of pieces sent in several texts reads (`router.policy.secret_pieces`):
        places only, no text, no secret."""
        grams = self._tables.grams
        if grams is None or len(text) < GRAM:
            return {}
        shown = text if text.isascii() else fold(text)[0]
        found: dict[int, set[int]] = {}
        for index, start, end in grams.find_matches_as_indexes(shown.lower(), overlapping=True):
            if is_distinctive(shown[start:end]):
                for secret, offset in self._tables.gram_places[index]:
                    found.setdefault(secret, set()).add(offset)
        return {self._names[s]: (self._coverable[s], frozenset(places)) for s, places in found.items()}

    def _piece_spans(self, text: str) -> list[Span]:
        """Pieces of one secret that together spell most of it, wherever and in whatever order.
        Most of it means most of the secret's characters, not of the text: an id that shares
        digits with a key, written twice, is not the key. A piece is redacted when it could
        identify the secret on its own (not a plain word such as the `secret` of `planted-secret`
        sitting elsewhere in the text)."""
        grams = self._tables.grams
        if grams is None or len(text) < 2 * GRAM:
            return []
        view, origin = (text.lower(), None) if text.isascii() else fold(text, identity(text))
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
            for s, e in merge_spans(where):
                start, end = (s, e) if origin is None else back(origin, s, e)
                piece = text[start:end]
                if is_distinctive(piece) or not piece.isalpha():  # a word (`mastodon`) is everyone's
                    found.append((start, end))
        return found

    def _spelled_spans(self, text: str) -> list[Span]:
        """Where in `text` a secret or a secret shape is, in every spelling (empty: nothing)."""
        if len(text) < MIN_SECRET_LENGTH:
            return []
        text = searchable(text)
        tables = self._tables
        found = tables.raw.spans(text) + shape_spans(text)
        folded = fold(text)[0]
        plain = decode(folded)[0]
        if plain != text and (tables.plain.spans(plain) or shape_spans(plain)):
            plain_view, origin = decode(*fold(text, identity(text)))
            assert origin is not None
            found += [
                back(origin, s, e) for s, e in tables.plain.spans(plain_view) + shape_spans(plain_view)
            ]
        spaced = self._stride_spans(text, plain) + self._word_spans(text, plain)
        spaced += self._anagrams.spans(text, plain)
        return found + self._skeleton_spans(text, folded, plain) + spaced

    def _word_spans(self, text: str, plain: str) -> list[Span]:
        """A secret spelt a word at a time: the initials of the words (`mike oscar lima`, an
        acrostic), or its characters as words of one character with words between (`m and o`);
        the words that spell it are redacted, each on its own."""
        needles = self._tables.needles
        if needles is None or plain.count(" ") < MIN_PLAIN_NEEDLE:
            return []
        words = plain.split()
        picks = ("".join(w[0] for w in words), "".join(w for w in words if len(w) == 1))
        long_enough = [p for p in picks if len(p) >= MIN_PLAIN_NEEDLE]
        if not any(needles.find_matches_as_indexes(skeleton(p)[0]) for p in long_enough):
            return []
        whole, origin = decode(*fold(text, identity(text)))
        assert origin is not None
        found: list[Span] = []
        for keep in (lambda w: True, lambda w: len(w) == 1):
            chosen = [m for m in _WORD.finditer(whole) if keep(m.group())]
            # Each chosen word is redacted whole, and only those: not the words between them.
            words_at = [(origin[m.start()][0], origin[m.end() - 1][1]) for m in chosen]
            view, places = skeleton("".join(m.group()[0] for m in chosen), words_at)
            assert places is not None
            found += [places[i] for _x, s, e in needles.find_matches_as_indexes(view) for i in range(s, e)]
        return found

    def _stride_spans(self, text: str, plain: str) -> list[Span]:
        """A secret with the same filler between its characters (`mxoxlxtx`): found in every
        STRIDES-th character of the decoded text, at each offset."""
        needles = self._tables.needles
        if needles is None or len(plain) < 2 * MIN_PLAIN_NEEDLE:
            return []
        strides = [(k, o) for k in STRIDES for o in range(k)]
        if not any(needles.find_matches_as_indexes(skeleton(plain[o::k])[0]) for k, o in strides):
            return []
        whole, origin = decode(*fold(text, identity(text)))
        assert origin is not None
        found = []
        for k, o in strides:
            view, places = skeleton(whole[o::k], origin[o::k])
            assert places is not None
            found += [back(places, s, e) for _i, s, e in needles.find_matches_as_indexes(view)]
        return found

    def _skeleton_spans(
        self, text: str, folded: str | None = None, plain: str | None = None, thorough: bool = True
    ) -> list[Span]:
        """Finds in the skeleton of the decoded text; `thorough`: also of the text undecoded, read
        as quoted-printable, and without its spaces (a text that joins strings already read one
        by one needs only the first)."""
        needles = self._tables.needles
        if needles is None or len(text) < MIN_SECRET_LENGTH:
            return []
        text = searchable(text)
        folded = fold(text)[0] if folded is None else folded
        plain = decode(folded)[0] if plain is None else plain
        views = {"decoded": plain}
        if thorough:
            views |= other_views(folded, plain)
        hits = [name for name, view in views.items() if needles.find_matches_as_indexes(skeleton(view)[0])]
        found = []
        for name in hits:
            view, origin = fold(text, identity(text))
            if name != "undecoded":
                _, quoted, squeeze = next((v for v in OTHER_VIEWS if v[0] == name), ("", 0, False))
                view, origin = decode(view, origin, quoted=quoted, squeeze=squeeze)
            view, origin = skeleton(view, origin)
            assert origin is not None
            for index, start, end in needles.find_matches_as_indexes(view):
                span = back(origin, start, end)
                if index in self._tables.encoded:
                    tail = _BASE64_TAIL.match(text, span[1])
                    span = (span[0], tail.end() if tail else span[1])
                found.append(span)
        return found


class RedactingFilter(logging.Filter):
    """Attach to a handler: the formatted message, traceback and stack are redacted in place."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "redacted_by", None) is self.redactor:
            return True  # another handler's filter with this redactor did it: redacting again is a no-op
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
        record.redacted_by = self.redactor
        return True
