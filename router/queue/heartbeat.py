"""The router's heartbeat: who it is and what it holds, renewed with a TTL a third as often.

While the key lives, no other router takes this router's processing list; `status` and the
dashboard read it (skills, credentials' platforms, dry run, the kill switch (its floor and the live
state), audit head,
dead-letter size, and the bounds' quotas, circuits and new-account platforms). Each beat asks
first whether Redis is still fit to use (`redis_guard`), and says so in the value when it is not.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import redis

from router.audit.recorder import AuditRecorder
from router.config.credentials import platforms_with_credentials
from router.config.settings import RouterSettings
from router.errors import describe
from router.policy import kill_switch
from router.policy.checks import Policy
from router.queue.dead_letter import DeadLetters
from router.queue.redis_guard import RedisGuard
from router.queue.redis_io import REDIS_DOWN

log = logging.getLogger("safeclaw.router.worker")


class Heartbeat:
    def __init__(
        self,
        settings: RouterSettings,
        skills: list[str],
        credentials: Mapping[str, str],
        policy: Policy,
        audit: AuditRecorder,
        dead_letters: DeadLetters,
        stop: threading.Event,
    ) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.skills = skills
        self.credentials = credentials
        self.policy = policy
        self.audit = audit
        self.dead_letters = dead_letters
        self.started_at = time.time()
        self._stop = stop
        self.guard = RedisGuard(settings)  # asked again each beat: is Redis still fit to use

    def value(self, dead_letters: int | None = None, conn: redis.Redis | None = None) -> str:
        """Who this router is; with a connection also today's `quotas` {platform: {kind: {limit,
        used}}}, the open `circuits` and the platforms in `new_account` mode (router.bounds)."""
        value: dict[str, Any] = {
            "dead_letter": dead_letters,
            "router_id": self.settings.router_id,
            "pid": os.getpid(),
            "started_at": self.started_at,
            "ts": time.time(),
            "ttl": self.settings.heartbeat_ttl,  # alive for twice this (protocol.heartbeat)
            "skills": self.skills,
            "platforms_with_credentials": platforms_with_credentials(self.credentials),
            "dry_run": self.settings.dry_run,
            "kill_switch_floor": self.settings.kill_switch,
            "audit": self.audit.head,
        }
        if self.guard.refused:
            value["redis_refused"] = self.guard.refused
        if conn is not None:
            try:
                switch = kill_switch.read(conn, self.keys, self.settings.kill_switch)
                value["kill_switch"] = {"on": switch.on, "source": switch.source, "by": switch.by,
                                        "since": switch.since}
                value.update(self.policy.bounds.status(conn, self.policy.clock()))
            except REDIS_DOWN:
                raise
            except Exception:  # the beat itself must go on, or other routers take our commands
                log.exception("cannot read the bounds' counters for the heartbeat")
        return json.dumps(value)

    def beat(self, conn: redis.Redis) -> None:
        self.guard.check(conn)
        key = self.keys.router_heartbeat(self.settings.router_id)
        conn.set(key, self.value(self.dead_letters.size(conn), conn), ex=self.settings.heartbeat_ttl)

    def loop(self, conn: redis.Redis) -> None:
        """Beat until the router stops, on the router's pool (its own connection from it)."""
        while not self._stop.is_set():
            try:
                self.beat(conn)
            except redis.RedisError:
                pass  # Redis unavailable: the main loop says so in the log
            except BaseException as exc:  # the beat thread lives as long as the router
                log.error("heartbeat not written (%s)", describe(exc), exc_info=True)
            self._stop.wait(self.settings.heartbeat_ttl / 3)
