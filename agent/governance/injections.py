"""Rules the owner injects (and proposals accepted) from the dashboard: a Redis list
(`Keys.rule_injections`, newest first) of JSON `{rule, why, author, ts}` or `{accept: N, author, ts}`.

The agent applies them oldest first, then removes each entry it has applied (LREM; the only write
its Redis user has on the list). Nothing is lost and nothing is applied twice: an entry is
removed only after it is in the workspace, and one applied but not yet removed (a crash in
between) is known by its hash and only removed. A malformed entry is logged and removed, so it
cannot block the list. The dashboard caps the list (`protocol.rule_injections.MAX_PENDING`), so it
cannot grow without bound while the agent is away.
"""

from __future__ import annotations

import logging

import redis

from agent.governance.files import Governance, GovernanceError
from protocol.keys import Keys

log = logging.getLogger("safeclaw.agent.governance")


def apply_injections(conn: redis.Redis, keys: Keys, governance: Governance) -> int:
    """Apply the entries not applied yet and remove them; returns how many were applied.
    Redis trouble is logged, not raised (the entries stay queued for the next time)."""
    try:
        raw_entries = conn.lrange(keys.rule_injections, 0, -1)
    except redis.RedisError as exc:
        log.warning("cannot read rule injections (%s); will try again next time", exc)
        return 0
    applied = 0
    for raw in reversed(list(raw_entries)):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        try:
            applied += governance.apply_injection(text)
        except GovernanceError as exc:
            log.warning("removed a rule injection that cannot be applied: %s", exc)
        try:
            conn.lrem(keys.rule_injections, -1, text)  # the oldest copy: the one just applied
        except redis.RedisError as exc:
            log.warning("applied a rule injection but could not remove it yet (%s)", exc)
            break
    return applied
