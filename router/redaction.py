"""Redaction: no loaded secret value (or common token shape) leaves the router process.

`Redactor.text()` replaces every secret in its plain, URL-encoded, base64 and JSON-escaped forms,
plus token shapes (sk-..., Bearer ..., JWTs, Slack xox?-, Telegram bot tokens, GitHub, AWS), with
`[REDACTED]`. `RedactingFilter` applies it to every log record a handler emits; the worker
applies `Redactor.value()` to every reply before it is sent.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text; such a secret is refused at start

TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?i)\b(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b\d{8,10}:[A-Za-z0-9_-]{35}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    # "password: hunter22", "api_key=...": a secret named as one, whatever its shape.
    re.compile(r"(?i)\b(?:password|passwd|passphrase|pwd|api[_ -]?key|secret|access[_ -]?token"
               r"|auth[_ -]?token)\s*[:=]\s*[\"']?[^\s\"',;]{4,}"),
)


def secret_forms(secret: str) -> set[str]:
    """The shapes one secret takes in logs, URLs, headers and JSON."""
    raw = secret.encode("utf-8")
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms |= {text, text.rstrip("=")}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = [s for s in secrets if s]
        self.too_short = sorted({s for s in values if len(s) < MIN_SECRET_LENGTH})
        forms: set[str] = set()
        for secret in values:
            if len(secret) >= MIN_SECRET_LENGTH:
                forms |= secret_forms(secret)
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(forms, key=len, reverse=True)
        self._secrets = re.compile("|".join(re.escape(f) for f in ordered)) if ordered else None

    def text(self, text: str) -> str:
        if self._secrets is not None:
            text = self._secrets.sub(REDACTED, text)
        for pattern in TOKEN_PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text

    def finds(self, text: str) -> bool:
        """True when the text holds a loaded secret or a secret-shaped string."""
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
