"""Make provider error text safe and short before it goes into an `LLMError`."""

from __future__ import annotations

from protocol.redaction import Redactor

MAX_DETAIL = 300


def redact(text: str, *secrets: str | None) -> str:
    """Every secret (an API key), in any spelling the one redactor knows, replaced by a marker;
    then the text cut to a readable size."""
    text = Redactor(s for s in secrets if s).text(text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
