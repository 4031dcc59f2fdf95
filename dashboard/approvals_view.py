"""The owner's list of pending approvals, a page at a time, in two round trips whatever the count:
the ids (and the total) in one, every record of the page and any decision already taken in the
next."""

from __future__ import annotations

from typing import Any

import redis

from dashboard.activity import VERBS, origin_of, platform_name
from dashboard.values import json_object, text
from protocol.approvals import public_view
from protocol.invisible import shown
from protocol.keys import Keys

PAGE = 50


def pending_page(conn: redis.Redis, keys: Keys, offset: int = 0, limit: int = PAGE) -> dict[str, Any]:
    """Pending approvals soonest to expire first: {approvals, total, offset}."""
    pipe = conn.pipeline(transaction=False)
    pipe.zcard(keys.approvals_pending)
    pipe.zrange(keys.approvals_pending, offset, offset + limit - 1)
    total, ids = pipe.execute()
    pipe = conn.pipeline(transaction=False)
    for approval_id in ids:
        pipe.get(keys.approval(str(approval_id)))
        pipe.get(keys.approval_decision(str(approval_id)))
    found = pipe.execute() if ids else []
    views = []
    for raw, decided in zip(found[0::2], found[1::2], strict=True):
        record = json_object(raw)
        if record is not None:
            try:
                view = in_words({**shown_fields(record), **public_view(record)})
            except (TypeError, ValueError):  # a record the router wrote that cannot be shown
                continue
            views.append({**view, "decision": decision_of(decided)})
    return {"approvals": views, "total": int(total), "offset": offset}


def decision_of(raw: Any) -> dict[str, str] | None:
    """The owner's decision already taken (a router has not acted on it yet), or None."""
    value = json_object(raw)
    if value is None or value.get("decision") not in ("approve", "deny"):
        return None
    return {"decision": str(value["decision"]), "by": text(value.get("by"), 80)}


def in_words(view: dict[str, Any]) -> dict[str, Any]:
    """The view plus `title` ("Post on Mastodon") and `origin_words` ("from Telegram (chat 7)")."""
    kind, platform = text(view.get("kind"), 20), text(view.get("platform"), 40)
    verb = VERBS[kind][0] if kind in VERBS else f"run {text(view.get('action'), 60) or 'a command'}"
    title = verb.format(p=platform_name(platform))
    conversation = text(view.get("conversation"), 120)
    asked: dict[str, Any] = view["origin"] if isinstance(view.get("origin"), dict) else {}
    origin = {"channel": conversation.split(":", 1)[0], "conversation": conversation, **asked}
    return {**view, "title": title[:1].upper() + title[1:], "origin_words": origin_of({"origin": origin})[1]}


def shown_fields(record: dict[str, Any]) -> dict[str, Any]:
    """What the owner must see besides the text, checked: every field the platform would receive
    (`payload`: [{field, label, value}], a character nobody would see written as its escape), why
    it waits, who asked and what that turn had read."""
    payload: list[Any] = record["payload"] if isinstance(record.get("payload"), list) else []
    origin: dict[str, Any] | None = record["origin"] if isinstance(record.get("origin"), dict) else None
    read: list[Any] = record["read"] if isinstance(record.get("read"), list) else []
    return {
        "payload": [
            {"field": text(item.get("field"), 10_000), "label": text(item.get("label"), 10_000),
             "value": shown(text(item.get("value"), 10_000))}
            for item in payload[:50]
            if isinstance(item, dict)
        ],
        "origin": {k: v for k, v in origin.items() if isinstance(v, str | bool | list)} if origin else None,
        "read": [text(item, 300) for item in read[:20] if isinstance(item, str)],
        "reason": text(record.get("reason"), 500),
    }
