"""Logging of the agent: stderr and a rotating file, with secrets redacted from every record."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Iterable
from pathlib import Path

from agent.errors import StateFileError
from protocol.redaction import RedactingFilter, Redactor


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
    redactor = RedactingFilter(Redactor(s for s in secrets if len(s) >= 6))  # the one redactor
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
