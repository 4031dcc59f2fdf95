"""Router logging: stderr and a rotating file under `logs/`, both passed through the redactor."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from router.redaction import RedactingFilter, Redactor

FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"


def setup_logging(log_file: Path, level: str, redactor: Redactor) -> list[logging.Handler]:
    """Install redacting handlers on the root logger; returns them so the caller can remove them."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handlers: list[logging.Handler] = [
        logging.StreamHandler(sys.stderr),
        logging.handlers.RotatingFileHandler(log_file, maxBytes=5_000_000, backupCount=3, encoding="utf-8"),
    ]
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(RedactingFilter(redactor))
        root.addHandler(handler)
    root.setLevel(level)
    # Client libraries may log request details (URLs, headers); keep them at WARNING.
    for noisy in ("httpx", "httpcore", "urllib3", "atproto", "prawcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handlers
