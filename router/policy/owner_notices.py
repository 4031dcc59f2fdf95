"""Owner notices: what the router tells the owner, delivered by the agent's channels.

The router pushes JSON notices on `Keys.owner_notices` (newest first, capped); the agent takes
each into its in-flight list, sends it to the conversation that asked (and to the owner's
private Telegram chat when Telegram is configured), then drops it. Types (field `type`):
`approval_requested` (with the one-time `owner_code` for a decision typed in a chat),
`approval_settled` (approved / denied / expired, with the run's status and message),
`circuit_open` / `circuit_closed` (a platform's writes stopped or resumed: `platform`, `message`,
`until`; pushed by `router.bounds.circuit`).
Notices never enter the model's prompt.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis

from protocol.keys import Keys

MAX_NOTICES = 1000


def push(conn: redis.Redis, keys: Keys, notice_type: str, **fields: Any) -> None:
    notice = {"type": notice_type, "ts": time.time(), **fields}
    pipe = conn.pipeline(transaction=False)
    pipe.lpush(keys.owner_notices, json.dumps(notice, ensure_ascii=False).encode("utf-8", "replace"))
    pipe.ltrim(keys.owner_notices, 0, MAX_NOTICES - 1)
    pipe.execute()
