"""The title and community a Reddit or Moltbook post gets when the command names none: here, apart
from the clients (and their SDKs), so the owner's preview of a held post can say them too
(`router.policy.payload_preview`)."""

from __future__ import annotations

TITLE_LIMIT = 300  # Reddit's and Moltbook's longest title
DEFAULT_SUBMOLT = "general"  # where a Moltbook post goes when no community is named


def reddit_title(text: str) -> str:
    """A post title from the first line of the text, cut to Reddit's 300 characters on a word."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "") or "(untitled)"
    if len(line) <= TITLE_LIMIT:
        return line
    cut = line[: TITLE_LIMIT - 1].rsplit(" ", 1)[0] or line[: TITLE_LIMIT - 1]
    return cut + "…"


def first_line(text: str) -> str:
    """A Moltbook post's title when none is given: its text's first line."""
    return text.strip().split("\n")[0]
