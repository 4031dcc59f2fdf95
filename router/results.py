"""Writing a command's results: its record, its reply, its dead-letter entry.

Done means: store the idempotency record, push the (redacted) reply with a TTL, then remove the
command from the processing list, in that order, in one round trip, so a crash between any two
steps is recovered by re-sending the stored reply. (No MULTI/EXEC: see `router.worker`.) A write
is retried while Redis is down, and given up after a few tries once the router is stopping.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from protocol import Reply, Status
from router.control_plane import RouterControl
from router.dead_letter import DeadLetters
from router.redaction import Redactor
from router.redis_io import REDIS_DOWN, RedisHealth, utf8
from router.settings import RouterSettings

log = logging.getLogger("safeclaw.router.worker")


class ResultWriter:
    def __init__(
        self,
        conn: redis.Redis,
        settings: RouterSettings,
        redactor: Redactor,
        redact: Callable[[Reply], dict[str, Any]],
        control: RouterControl,
        dead_letters: DeadLetters,
        health: RedisHealth,
        stop: threading.Event,
    ) -> None:
        self.conn = conn
        self.settings = settings
        self.keys = settings.keys
        self.processing = self.keys.processing(settings.router_id)
        self.redactor = redactor
        self.redact = redact
        self.control = control
        self.dead_letters = dead_letters
        self.health = health
        self._stop = stop

    def drop(self, raw: bytes) -> None:
        self.conn.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

    def finish(self, raw: bytes, reply: Reply, complete_record: bool) -> None:
        """Store the record, push the reply, drop the command; every step safe to repeat."""
        safe = self.redact(reply)
        text = self.redactor.text(json.dumps(safe, ensure_ascii=False))
        record = json.dumps({"state": "done", "reply": safe, "ts": time.time()}, ensure_ascii=False)
        response_key = self.keys.response(reply.id)
        audit_lines = self.control.take_mirror()

        def write(pipe: redis.client.Pipeline) -> None:
            self.control.mirror_into(pipe, audit_lines)
            if complete_record:
                pipe.set(
                    self.keys.idempotency(reply.id),
                    utf8(self.redactor.text(record)),
                    ex=self.settings.idempotency_ttl,
                )
            pipe.lpush(response_key, utf8(text))
            pipe.expire(response_key, self.settings.reply_ttl)
            pipe.delete(self.keys.attempts(reply.id))
            pipe.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

        self.write(write)

    def dead_letter(
        self, raw: bytes, action: str | None, reason: str, reply_id: str | None, kind: str = "invalid_json"
    ) -> None:
        """Set a command aside with the reason; answer it when an id is known and no reply follows."""
        reason = self.redactor.text(reason)  # before any cut below could leave half a secret
        log.error("dead-lettering command %s: %s", reply_id or "(no readable id)", reason)
        entry = self.redactor.text(
            json.dumps(
                {
                    "reason": reason,
                    "action": action,
                    "router_id": self.settings.router_id,
                    "ts": time.time(),
                    "command": self.redactor.text(raw[:20_000].decode("utf-8", "replace"))[:10_000],
                },
                ensure_ascii=False,
            )
        )

        def write(pipe: redis.client.Pipeline) -> None:
            self.dead_letters.push(pipe, utf8(entry))
            if reply_id is None:
                pipe.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

        self.write(write)
        if reply_id is not None:
            message = f"the command was set aside for the router's operator (dead-letter): {reason}"
            self.finish(raw, Reply(reply_id, Status.ERROR, message[:300], error=kind), False)

    def write(self, write: Any) -> None:
        """Send the steps in one round trip (in order, no MULTI), retried while Redis is down."""
        while True:
            try:
                pipe = self.conn.pipeline(transaction=False)
                write(pipe)
                pipe.execute()
                self.health.ok()
                return
            except REDIS_DOWN as exc:
                self.health.lost(exc)
                if self._stop.is_set() and self.health.failures > 3:
                    log.error("stopping with a finished command unrecorded; it stays in %s", self.processing)
                    return
                delay = self.health.backoff_seconds()
                if self._stop.is_set():
                    time.sleep(min(delay, 0.5))  # stopping: a few quick tries, then give up
                else:
                    self._stop.wait(delay)
