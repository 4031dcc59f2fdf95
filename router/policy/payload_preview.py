"""What a held write will send its platform, field by field, for the owner to read before deciding.

Built from the command's params (the same params the skill turns into the platform's request),
so every field the platform receives is shown: the text, and also a title, a link, the post
replied to, quoted, liked or deleted, the community. A field this table does not name is shown
under its own name: nothing the platform receives is left out.
"""

from __future__ import annotations

from typing import Any

from protocol.invisible import shown

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
    """[{field, label, value}] for every param, in the order a reader needs them."""
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
