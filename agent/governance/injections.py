"""Rules the owner injects from the dashboard: a Redis list (`Keys.rule_injections`, newest first)
of JSON `{rule, why, author, ts}`. The agent may only read it, so each entry is applied once,
remembered by its hash, oldest first."""

from __future__ import annotations

import logging

import redis

from agent.governance.files import Governance, GovernanceError
from protocol import Keys

log = logging.getLogger("safeclaw.agent.governance")


def apply_injections(conn: redis.Redis, keys: Keys, governance: Governance) -> int:
    """Apply the entries not applied yet; returns how many were. Redis trouble is logged, not raised."""
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
            log.warning("skipped a rule injection: %s", exc)
    return applied
