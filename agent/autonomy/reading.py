"""What a cycle reads through the router: each submolt's newest posts and the notifications.

Only what the workspace's cursors have not seen is new (`AutonomyState.unseen`); a notification,
which has no id of its own, is known by a hash of its fields. A read the router refuses or fails
is named in the cycle's report and reads as nothing new from there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.autonomy import CONVERSATION
from agent.autonomy.state import AutonomyState
from agent.mind.act import RouterPort
from protocol.origin import AUTONOMY, Origin

FEED_LIMIT = 10
NOTIFICATION_LIMIT = 20
READING = Origin(AUTONOMY, "autonomy", platform="moltbook")  # whose the cycle's own reads are


@dataclass
class NewItems:
    items: list[dict[str, Any]] = field(default_factory=list)  # each with its "source": post | notification
    fresh: dict[str, list[str]] = field(default_factory=dict)  # per cursor, the ids newly seen
    errors: list[str] = field(default_factory=list)  # the reads that failed, and why


def read_new(router: RouterPort, submolts: Sequence[str], state: AutonomyState) -> NewItems:
    new_items = NewItems()
    for submolt in submolts:
        reply = router.call(
            "MOLTBOOK_FEED", {"submolt": submolt, "sort": "new", "limit": FEED_LIMIT}, CONVERSATION,
            origin=READING,
        )
        posts = _listed(reply, "posts", new_items.errors, f"feed m/{submolt}")
        source = f"feed:{submolt}"
        new = state.unseen(source, [str(p.get("id", "")) for p in posts])
        new_items.fresh[source] = new
        new_items.items += [{**p, "source": "post"} for p in posts if str(p.get("id", "")) in new]
    reply = router.call(
        "GET_NOTIFICATIONS", {"platform": "moltbook", "limit": NOTIFICATION_LIMIT}, CONVERSATION,
        origin=READING,
    )
    notes = _listed(reply, "notifications", new_items.errors, "notifications")
    keyed = {_notification_id(n): n for n in notes}
    new = state.unseen("notifications", list(keyed))
    new_items.fresh["notifications"] = new
    new_items.items += [{**keyed[k], "source": "notification"} for k in new]
    return new_items


def _listed(reply: dict[str, Any], key: str, errors: list[str], what: str) -> list[dict[str, Any]]:
    if reply.get("status") != "ok":
        errors.append(f"{what}: {reply.get('error') or reply.get('status')}")
        return []
    found = (reply.get("result") or {}).get(key)
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _notification_id(item: dict[str, Any]) -> str:
    keyed = {k: item.get(k) for k in ("kind", "author", "post_id", "created_at", "text")}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()[:20]
