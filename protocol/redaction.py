"""The one redactor: no loaded secret (or common token shape) leaves a SafeClaw process.

Used by the router (every reply, log line, dead letter and audit line, and `secret_in_text`
before a post) and by the agent (its logs and LLM provider errors). Only the router's own
platform clients hold a credential, and every reply a skill builds is made of typed fields (ids,
counts, other people's texts; a platform's error is its kind and a fixed message). What could
still carry a credential is a platform echoing it, and a platform writes what it echoes in its
transport's encodings: `protocol.transport_spellings` lists them. One pass finds them all: one
Aho-Corasick automaton over every spelling of every secret, searched case-blind (ASCII) in the
text with its line breaks taken out (a wrapped header or body); then the token shapes of
`protocol.secret_shapes` (keys nobody loaded). Spellings no transport produces (anagrams, Morse,
Braille, Caesar, look-alike letters, a key cut across fields or posts) need someone who already
holds the key to write them, and are not searched.

`text()` replaces each find with `[REDACTED]`; `value()` does so in every string of a JSON-like
value (keys included); `finds()` says whether a text holds any.
"""

from __future__ import annotations

import functools
import logging
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

from protocol.secret_shapes import TOKEN_PATTERNS, escaped_shape_spans, shape_spans
from protocol.transport_spellings import spellings
from protocol.value_strings import collect_strings, rebuild

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "TOKEN_PATTERNS", "RedactingFilter", "Redactor"]

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text; such a secret is refused at start
Span = tuple[int, int]
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # keeps every position
_BREAKS = re.compile(r"(?:\r|\n|\\r|\\n)+")  # a line break, or one escaped inside a JSON string
_BASE64 = frozenset(string.ascii_letters + string.digits + "+/-_")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SEPARATOR = "\0"  # between a value's strings when they are searched at once: in no spelling


@dataclass(frozen=True)
class Needles:
    automaton: AhoCorasick | None
    widened: tuple[bool, ...]  # for each needle: a base64 core (its partial groups are redacted too)


@functools.lru_cache(maxsize=64)
def build_needles(secrets: tuple[str, ...]) -> Needles:
    """Every transport spelling of these secrets, lower-cased, in one automaton (built once per
    set of secrets: a redactor is made per settings, often)."""
    needles: dict[str, bool] = {}
    for secret in secrets:
        plain, cores = spellings(secret)
        for form in plain:  # searched as the text is: line breaks out, lower case
            needles.setdefault(_BREAKS.sub("", form).translate(_ASCII_LOWER), False)
        for core in cores:
            needles[core.translate(_ASCII_LOWER)] = True
    ordered = sorted(n for n in needles if len(n) >= MIN_SECRET_LENGTH)
    if not ordered:
        return Needles(None, ())
    automaton = AhoCorasick(ordered, matchkind=MatchKind.Standard)
    return Needles(automaton, tuple(needles[n] for n in ordered))


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _replace(text: str, spans: list[Span]) -> str:
    out, cursor = [], 0
    for start, end in merge_spans(spans):
        out += [text[cursor:start], REDACTED]
        cursor = end
    return "".join(out) + text[cursor:] if out else text


def _without_breaks(text: str) -> tuple[str, list[int] | None]:
    """The text with its line breaks taken out, and where each of its characters was (None: the
    text had none)."""
    if "\n" not in text and "\r" not in text and "\\" not in text:
        return text, None
    places: list[int] = []
    kept: list[str] = []
    cursor = 0
    for match in _BREAKS.finditer(text):
        kept.append(text[cursor : match.start()])
        places.extend(range(cursor, match.start()))
        cursor = match.end()
    if not cursor:
        return text, None
    kept.append(text[cursor:])
    places.extend(range(cursor, len(text)))
    return "".join(kept), places


def _widen(text: str, start: int, end: int) -> Span:
    """A base64 core's span with the partial groups beside it (they hold bits of the secret too)
    and its padding."""
    for _ in range(2):
        if start > 0 and text[start - 1] in _BASE64:
            start -= 1
    for _ in range(2):
        if end < len(text) and text[end] in _BASE64:
            end += 1
    while end < len(text) and text[end] == "=":
        end += 1
    return start, end


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.too_short = sorted(s for s in values if len(s) < MIN_SECRET_LENGTH)
        self._needles = build_needles(tuple(s for s in values if len(s) >= MIN_SECRET_LENGTH))

    def text(self, text: str) -> str:
        return _replace(text, self._spans(text))

    def finds(self, text: str) -> bool:
        """True when the text holds a loaded secret (in a transport spelling) or a secret shape."""
        return bool(self._spans(text))

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (keys included) redacted, the same shape back
        (tuples as lists, keys as strings). Its strings are searched at once first: most values
        hold nothing, and are then only copied."""
        strings: list[str] = []
        collect_strings(value, strings)
        if not strings or not self._spans(_SEPARATOR.join(strings)):
            return rebuild(value, strings)
        return rebuild(value, [self.text(s) for s in strings])

    def _spans(self, text: str) -> list[Span]:
        if len(text) < MIN_SECRET_LENGTH:
            return []
        if not text.isascii() and _SURROGATE.search(text):  # half an emoji, which JSON can carry
            text = _SURROGATE.sub("\ufffd", text)  # cannot be searched: U+FFFD keeps each position
        found = shape_spans(text) + escaped_shape_spans(text)
        automaton = self._needles.automaton
        if automaton is None:
            return found
        joined, places = _without_breaks(text)
        view = joined.translate(_ASCII_LOWER)
        for index, start, end in automaton.find_matches_as_indexes(view, overlapping=True):
            if places is not None:
                start, end = places[start], places[end - 1] + 1
            found.append(_widen(text, start, end) if self._needles.widened[index] else (start, end))
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
