"""Make provider error text safe and short before it goes into an `LLMError`."""

from __future__ import annotations

MAX_DETAIL = 300


def redact(text: str, *secrets: str | None) -> str:
    """Replace every secret (an API key) in `text` with a marker and cut the text to a readable size."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
