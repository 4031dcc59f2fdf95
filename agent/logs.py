"""Logging of the agent: stderr and a rotating file, with secrets redacted from every record."""

from __future__ import annotations

import logging
import logging.handlers
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, urlsplit

# Secrets the agent itself may hold: LLM keys, the Telegram bot token, the Redis password.
AGENT_SECRET_VARIABLES = (
    "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_KEY", "TELEGRAM_BOT_TOKEN",
)
TOKEN_SHAPES = re.compile(
    r"sk-[A-Za-z0-9_-]{16,}|\b\d{6,12}:[A-Za-z0-9_-]{30,}\b|\bbot\d{6,12}:[A-Za-z0-9_-]{30,}"
)


def secret_values(env: Mapping[str, str]) -> list[str]:
    values = [env[name] for name in AGENT_SECRET_VARIABLES if env.get(name)]
    if env.get("REDIS_URL"):
        password = urlsplit(env["REDIS_URL"]).password
        if password:
            values.append(password)
    return [v for v in values if len(v) >= 6]


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


def setup_logging(log_file: Path, env: Mapping[str, str], verbose: bool = False) -> None:
    redactor = RedactingFilter(secret_values(env))
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=2_000_000, backupCount=3)
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
