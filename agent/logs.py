"""Logging of the agent: stderr and a rotating file, with secrets redacted from every record."""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from agent.errors import StateFileError

TOKEN_SHAPES = re.compile(
    r"sk-[A-Za-z0-9_-]{16,}|\b\d{6,12}:[A-Za-z0-9_-]{30,}\b|\bbot\d{6,12}:[A-Za-z0-9_-]{30,}"
)


class RedactingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for v in secrets for s in (v, quote(v, safe=""))}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[REDACTED]")
        return TOKEN_SHAPES.sub("[REDACTED]", text)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class QuietFileHandler(logging.handlers.RotatingFileHandler):
    """A log file that says once, in one line, that it cannot be written (a full disk), instead of
    a traceback on stderr for every record."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        if not self.failed:
            self.failed = True
            print(f"safeclaw: cannot write the log file {self.baseFilename} (disk full?); "
                  "logging to stderr only until it can", file=sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        if self.failed and self.stream is not None and not self.stream.closed:
            self.failed = False  # written again (handleError sets it when this emit failed)


def setup_logging(log_file: Path, secrets: Iterable[str], verbose: bool = False) -> None:
    """`secrets`: the values the agent holds (`AgentSettings.secrets()`), redacted from every record."""
    redactor = RedactingFilter(s for s in secrets if len(s) >= 6)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        file_handler: logging.Handler = QuietFileHandler(log_file, maxBytes=2_000_000, backupCount=3)
    except OSError as exc:
        raise StateFileError(f"cannot write the log file {log_file}: {exc.strerror or exc}; "
                             "make its folder writable or set SAFECLAW_LOG_DIR") from None
    stderr_handler = logging.StreamHandler()
    stderr_handler.setLevel(logging.INFO if verbose else logging.WARNING)
    for handler in (file_handler, stderr_handler):
        handler.addFilter(redactor)
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Client libraries log request URLs (the Telegram token is part of its URLs): keep them quiet.
    for noisy in ("httpx", "httpcore", "telegram", "urllib3", "selenium", "openai", "google_genai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
