"""Whether the router may take commands from its Redis: the primary, and one that keeps every key.

Each new connection checks both right after its login (`protocol.redis_safety`): at start, on every
reconnect, after a failover. A connection already open would not notice an operator changing the
policy under a running router, so the heartbeat asks again each beat (`check`). While Redis must
not be used the loop takes nothing (`refused` says why, once in the log and in the heartbeat);
what it already holds stays in its processing list, and the next beat that finds Redis fit again
lets the loop go on and recover it. At start, a Redis that must not be used stops the router
(`refuse_at_start`).
"""

from __future__ import annotations

import logging
import threading

import redis

from protocol.redis_address import parse_address
from protocol.redis_link import check_now
from protocol.redis_safety import ACCEPT_EVICTION_SETTING, RedisUnsafe, current_eviction
from router.config.settings import RouterSettings
from router.errors import ConfigError
from router.queue.redis_io import REDIS_DOWN

log = logging.getLogger("safeclaw.router.worker")


class RedisGuard:
    def __init__(self, settings: RouterSettings) -> None:
        self.where = parse_address(settings.redis_url).where if settings.redis_url else "?"
        self.accepted = settings.redis_accept_eviction
        self.refused: str | None = None
        self._lock = threading.Lock()

    def check(self, conn: redis.Redis) -> str | None:
        """Ask Redis now; why it may drop keys, or None. Redis unavailable, or a replica (refused
        at each login, READONLY on each write), changes nothing here: the loop waits that out."""
        try:
            reason = current_eviction(conn, self.where, self.accepted)
        except RedisUnsafe as exc:  # a new connection for the check was refused at its login
            if exc.kind != "eviction":
                return self.refused
            reason = exc.reason
        except REDIS_DOWN:
            return self.refused
        self._set(reason)
        return reason

    def _set(self, reason: str | None) -> None:
        with self._lock:
            before, self.refused = self.refused, reason
        if reason is not None and reason != before:
            log.error("router stops taking commands: %s. Commands stay queued; it goes on by itself "
                      "once Redis is fixed", reason)
        elif reason is None and before is not None:
            log.info("Redis keeps every key again: the router takes commands again")


def refuse_at_start(conn: redis.Redis, settings: RouterSettings) -> None:
    """Stop a router whose Redis must not hold its keys, with why and how to fix it; a Redis that
    does not answer yet is waited for by the loop as usual."""
    if settings.redis_accept_eviction:
        log.warning("%s=%s: this Redis is accepted although it evicts keys when full (for a Redis "
                    "dedicated to SafeClaw): a full Redis can lose or repeat commands",
                    ACCEPT_EVICTION_SETTING, settings.redis_accept_eviction)
    try:
        check_now(conn)
    except RedisUnsafe as exc:
        conn.close()
        raise ConfigError(f"the router will not use this Redis: {exc.reason}") from None
    except REDIS_DOWN:
        pass
