"""What a held write will send its platform, field by field, for the owner to read before deciding.

Built from the command's params (the same params the skill turns into the platform's request),
so every field the platform receives is shown: the text, and also a title, a link, the post
replied to, quoted, liked or deleted, the community. A field this table does not name is shown
under its own name: nothing the platform receives is left out.
"""

from __future__ import annotations

from typing import Any

from protocol.invisible import shown
from router.platforms.titles import DEFAULT_SUBMOLT, TITLE_LIMIT, first_line, reddit_title

LABELS = {
    "platform": "platform",
    "title": "title",
    "text": "text",
    "url": "link",
    "reply_to": "in reply to",
    "quote": "quoting",
    "subreddit": "community",
}
# What a target means for each kind of write.
TARGET_LABELS = {"like": "post to like", "delete": "post to delete", "reply": "post replied to"}
MAX_VALUE_CHARS = 10_000


def preview(kind: str, params: dict[str, Any]) -> list[dict[str, str]]:
    """[{field, label, value}] for every param, in the order a reader needs them, and what the
    platform will be sent in place of a param left out (a title taken from the text, the
    default community), said so."""
    params = {**params, **filled_in(kind, params)}
    order = [*LABELS, *sorted(k for k in params if k not in LABELS)]
    shown = []
    for name in order:
        if name not in params or params[name] in (None, ""):
            continue
        value = params[name]
        text = value if isinstance(value, str) else repr(value)
        label = LABELS.get(name) or (TARGET_LABELS.get(kind, "post") if name == "post_id" else name)
        shown.append({"field": name, "label": label, "value": text[:MAX_VALUE_CHARS]})
    return shown


def filled_in(kind: str, params: dict[str, Any]) -> dict[str, str]:
    """What a Reddit or Moltbook post's platform receives for a title or community not given."""
    platform, text = params.get("platform"), params.get("text")
    if kind != "post" or platform not in ("reddit", "moltbook") or not isinstance(text, str):
        return {}
    found: dict[str, str] = {}
    if not params.get("title"):
        title = reddit_title(text) if platform == "reddit" else first_line(text)[:TITLE_LIMIT]
        found["title"] = f"{title} (the text's first line)"
    if platform == "moltbook" and not params.get("subreddit"):
        found["subreddit"] = f"{DEFAULT_SUBMOLT} (the default)"
    return found


def lines(payload: Any) -> list[str]:
    """The preview as plain lines ("link: https://…"), for a chat, a terminal or a log; a character
    nobody would see is written as its escape (`protocol.invisible`)."""
    if not isinstance(payload, list):
        return []
    return [
        f"{item.get('label', item.get('field', '?'))}: {shown(str(item.get('value', '')))}"
        for item in payload
        if isinstance(item, dict)
    ]
