"""The one redactor: no loaded secret (or common token shape) leaves a SafeClaw process.

Used by the router (every reply, log line, dead letter and audit line) and by the agent (its
logs and LLM provider errors). `Redactor.text()` replaces with `[REDACTED]` every secret in the
spellings a careless platform echoes it in:

- character by character, in any mix of: plain, URL-encoding (`%2F`, `%2f`, `+`), HTML entities
  (`&#47;`, `&#x2f;`, `&amp;`), full-width characters (`ｓｅｃｒｅｔ`), JSON escapes (`\\u002f`);
- hex of its UTF-8 bytes (either case); base64 (standard or URL-safe) of any text that holds
  it, at any byte offset (`Bearer <key>` encoded whole);
- the secret reversed;
- a piece of it, 8 characters or longer, as when the key is split across two fields;

plus token shapes (sk-..., Bearer ..., JWTs, Slack, Telegram bot tokens, GitHub, AWS, and
`password: ...`-style pairs). `finds()` says whether a text holds any of these.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text; such a secret is refused at start
PIECE = 8  # a run of this many characters of a secret counts as the secret

TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?i)\b(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b(?:bot)?\d{6,12}:[A-Za-z0-9_-]{30,}"),  # Telegram bot tokens, in URLs too
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    # "password: hunter22", "api_key=...": a secret named as one, whatever its shape.
    re.compile(
        r"(?i)\b(?:password|passwd|passphrase|pwd|api[_ -]?key|secret|access[_ -]?token"
        r"|auth[_ -]?token)\s*[:=]\s*[\"']?[^\s\"',;]{4,}"
    ),
)
_NAMED_ENTITIES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "(?:apos|#39)"}


def _hex_ci(value: int, digits: int) -> str:
    """`value` in hex, either case, as a regex."""
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{digits}x}")


def char_pattern(char: str) -> str:
    """Every spelling of one character: plain, %-encoded, HTML entity, full-width, JSON escape."""
    code = ord(char)
    alternatives = [re.escape(char)]
    alternatives.append("".join(f"%{_hex_ci(b, 2)}" for b in char.encode("utf-8")))
    alternatives.append(f"&#0*{code};")
    alternatives.append(f"&#[xX]0*{_hex_ci(code, 1)};")
    if char in _NAMED_ENTITIES:
        alternatives.append(f"&{_NAMED_ENTITIES[char]};")
    if 0x21 <= code <= 0x7E:
        alternatives.append(re.escape(chr(code + 0xFEE0)))
    if code <= 0xFFFF:
        alternatives.append(rf"\\u{_hex_ci(code, 4)}")
    if char in '"\\/':
        alternatives.append(re.escape("\\" + char))
    if char == " ":
        alternatives.append(r"\+")
    return "(?:" + "|".join(alternatives) + ")"


def spelled(secret: str) -> str:
    return "".join(char_pattern(c) for c in secret)


def base64_cores(raw: bytes) -> set[str]:
    """The part of any base64 text that is fixed by `raw` alone, at each of the 3 byte offsets
    it can start at (so `Bearer <key>` encoded whole is caught too)."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        first = -(-8 * offset // 6)  # the first character no padding byte reaches
        last = 8 * (offset + len(raw)) // 6  # one past the last character only `raw` fills
        core = encoded[first:last]
        if len(core) >= MIN_SECRET_LENGTH:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def is_distinctive(piece: str) -> bool:
    """A piece worth redacting on its own: two kinds of character at least (not a plain word
    such as the 'moltbook' of 'moltbook_sk_...', which ordinary text holds too)."""
    kinds = [
        any(c.islower() for c in piece),
        any(c.isupper() for c in piece),
        any(c.isdigit() for c in piece),
        any(not c.isalnum() for c in piece),
    ]
    return sum(kinds) >= 2


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.too_short = sorted(s for s in values if len(s) < MIN_SECRET_LENGTH)
        usable = [s for s in values if len(s) >= MIN_SECRET_LENGTH]
        patterns: list[str] = []
        self._pieces: list[str] = []  # the secrets (and their reversals) pieces are taken from
        for secret in usable:
            raw = secret.encode("utf-8")
            patterns += [spelled(secret), spelled(secret[::-1]), f"(?i:{re.escape(raw.hex())})"]
            # A core, then the partial group and padding that close it (a few bits of the secret).
            patterns += [
                re.escape(core) + r"[A-Za-z0-9+/_-]{0,2}={0,2}"
                for core in sorted(base64_cores(raw), key=len, reverse=True)
            ]
            self._pieces += [secret, secret[::-1]]
        pieces = {
            source[i : i + PIECE]
            for source in self._pieces
            if len(source) > PIECE
            for i in range(len(source) - PIECE + 1)
        }
        distinctive = sorted(p for p in pieces if is_distinctive(p))
        self._secrets = re.compile("|".join(patterns)) if patterns else None
        self._piece = re.compile("|".join(re.escape(p) for p in distinctive)) if distinctive else None

    def text(self, text: str) -> str:
        if self._secrets is not None:
            text = self._secrets.sub(REDACTED, text)
        if self._piece is not None:
            text = self._redact_pieces(text)
        for pattern in TOKEN_PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text

    def _redact_pieces(self, text: str) -> str:
        """Each piece found is widened to the longest run of the same secret around it."""
        assert self._piece is not None
        out, cursor = [], 0
        for match in self._piece.finditer(text):
            if match.start() < cursor:
                continue
            start, end = match.start(), match.end()
            while end < len(text) and any(text[start : end + 1] in s for s in self._pieces):
                end += 1
            while start > cursor and any(text[start - 1 : end] in s for s in self._pieces):
                start -= 1
            out += [text[cursor:start], REDACTED]
            cursor = end
        return "".join(out) + text[cursor:] if out else text

    def finds(self, text: str) -> bool:
        """True when the text holds a loaded secret (in any spelling above) or a secret shape."""
        return self.text(text) != text

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (keys included) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


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
