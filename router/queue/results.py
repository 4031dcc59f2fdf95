"""Writing a command's results: its record, its reply, its dead-letter entry.

One writer per sending login's queue (`router.queue.senders`): its replies go to that login's reply
keys, its commands come from (and leave) this router's processing list of that queue.

Done means: store the idempotency record, push the (redacted) reply with a TTL, then remove the
command from the processing list, in that order, in one round trip, so a crash between any two
steps is recovered by re-sending the stored reply. With ROUTER_REDIS_MIN_REPLICAS the round trip
waits for the records to reach the replicas before the replies (`replica_wait`). (No MULTI/EXEC:
see `router.worker`.) A write is retried while Redis is down, and given up after a few tries once
the router is stopping.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from protocol.replies import Reply, Status
from router.audit.recorder import AuditRecorder
from router.config.settings import RouterSettings
from router.errors import describe
from router.pipeline import decode, readable_id
from router.queue.dead_letter import DeadLetters
from router.queue.redis_io import REDIS_DOWN, Batch, RedisHealth, as_bytes, utf8
from router.queue.replica_wait import ReplicaWait
from router.queue.senders import Sender
from router.redaction import Redactor
from router.registry import Skill

log = logging.getLogger("safeclaw.router.worker")
REPLY_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(…, ensure_ascii=False), built once


@dataclass(frozen=True)
class Answer:
    """A command's reply, ready to be written. `complete_record`: it completes the command's
    idempotency record. `recovered`: it may have a recovery count to clear (False: taken from
    the queue just now, so it has none)."""

    raw: bytes
    reply: Reply
    complete_record: bool
    recovered: bool = True


class ResultWriter:
    def __init__(
        self,
        conn: redis.Redis,
        settings: RouterSettings,
        redactor: Redactor,
        redact: Callable[[Reply], dict[str, Any]],
        audit: AuditRecorder,
        dead_letters: DeadLetters,
        health: RedisHealth,
        stop: threading.Event,
        sender: Sender,
    ) -> None:
        self.conn = conn
        self.settings = settings
        self.keys = settings.keys
        self.sender = sender
        self.processing = self.keys.processing_of(sender.login, settings.router_id)
        self.redactor = redactor
        self.redact = redact
        self.audit = audit
        self.dead_letters = dead_letters
        self.health = health
        self._stop = stop
        self.queued = 0  # commands left in the queue after the last round trip that took some
        self.replicas = ReplicaWait(settings, conn)  # done records on their replicas before replies

    def drop(self, raw: bytes) -> None:
        self.conn.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

    def finish(self, raw: bytes, reply: Reply, complete_record: bool, recovered: bool = True) -> None:
        """Store the record, push the reply, drop the command; every step safe to repeat."""
        self.finish_all([Answer(raw, reply, complete_record, recovered)])

    def finish_all(self, answers: list[Answer], take: int = 0, wait: int | None = None) -> list[bytes]:
        """`finish` for several commands in one round trip. `take`: in the same round trip, move
        up to that many next commands from the queue into the processing list and return them.
        The moves never block behind one another (a command already taken never waits for one
        more): only a single move (`take` 1, an idle router) waits up to `wait` seconds (BLMOVE),
        so an idle router's reply and its wait for the next command are one round trip."""
        steps = [(answer, *self._prepare(answer)) for answer in answers]
        audit_lines = self.audit.take_mirror()
        recorded = [answer.reply.id for answer, _, record in steps if record is not None]
        wait_at: list[int | None] = [None]

        def write(pipe: Batch) -> None:
            self.audit.mirror_into(pipe, audit_lines)
            for answer, _, record in steps:  # the done records first, on their replicas before a reply
                if record is not None:
                    pipe.set(self.keys.idempotency(answer.reply.id), record, ex=self.settings.idempotency_ttl)
            wait_at[0] = self.replicas.wait_in(pipe) if recorded else None
            for answer, text, _ in steps:
                reply_id = answer.reply.id
                response_key = self.sender.reply_key(reply_id)
                pipe.lpush(response_key, text)
                pipe.expire(response_key, self.settings.reply_ttl)
                if answer.recovered:
                    pipe.delete(self.keys.attempts(reply_id))
                pipe.lrem(self.processing, 1, answer.raw)
            if take == 1 and wait is not None:
                pipe.blmove(self.sender.queue, self.processing, wait, "RIGHT", "LEFT")
            else:
                for _ in range(take):
                    pipe.lmove(self.sender.queue, self.processing, "RIGHT", "LEFT")
            if take:
                pipe.llen(self.sender.queue)  # how many to take next time

        results = self.write(write)
        self.replicas.check_records(results, wait_at[0], recorded)
        if not take or len(results) < take + 1:
            self.queued = 0
            return []
        self.queued = int(results[-1])
        return [as_bytes(item) for item in results[-take - 1 : -1] if item is not None]

    def _prepare(self, answer: Answer) -> tuple[bytes, bytes | None]:
        """The reply as it is pushed, and the done record when the answer completes one."""
        safe = self.redact(answer.reply)
        text = self.redactor.text(REPLY_JSON.encode(safe))
        if not answer.complete_record:
            return utf8(text), None
        return utf8(text), utf8(done_record(text, time.time()))

    def dead_letter(
        self, raw: bytes, action: str | None, reason: str, reply_id: str | None, kind: str = "invalid_json",
        status: Status = Status.ERROR,
    ) -> None:
        """Set a command aside with the reason; answer it when an id is known and no reply follows."""
        reason = self.redactor.text(reason)  # before any cut below could leave half a secret
        log.error("dead-lettering command %s: %s", reply_id or "(no readable id)", reason)
        entry = self.redactor.text(
            json.dumps(
                {
                    "reason": reason,
                    "action": action,
                    "login": self.sender.login,  # whose queue it came from
                    "router_id": self.settings.router_id,
                    "ts": time.time(),
                    "command": self.redactor.text(raw[:20_000].decode("utf-8", "replace"))[:10_000],
                },
                ensure_ascii=False,
            )
        )

        def write(pipe: Batch) -> None:
            self.dead_letters.push(pipe, utf8(entry))
            if reply_id is None:
                pipe.lrem(self.processing, 1, raw)

        self.write(write)
        if reply_id is not None:
            message = f"the command was set aside for the router's operator (dead-letter): {reason}"
            self.finish(raw, Reply(reply_id, status, message[:300], error=kind), False)

    def set_aside(self, raw: bytes, reason: str, skills: Mapping[str, Skill]) -> None:
        """Dead-letter a queue item a step failed on, answering its sender when its id can be read
        (`unknown` when its side effect may have started); if even that fails short of Redis,
        drop it from our list so it cannot stop this router (or the next) again."""
        command_id = readable_id(raw)
        action, status = None, Status.ERROR
        try:
            envelope = decode(raw)
            action = envelope.action
            skill = skills.get(action)
            claimed = skill is not None and skill.side_effect and self.conn.exists(
                self.keys.idempotency(envelope.id))
            if claimed:
                status = Status.UNKNOWN  # it was claimed: it may have acted
        except REDIS_DOWN:
            raise
        except Exception:
            pass
        try:
            self.dead_letter(raw, action, f"router error: {reason}", command_id, "internal_error", status)
        except REDIS_DOWN:
            raise
        except Exception as exc:
            log.error("cannot dead-letter a command (%s); dropping it from our list", describe(exc))
            self.drop(raw)

    def write(self, write: Any) -> list[Any]:
        """Send the steps in one round trip (in order, no MULTI), retried while Redis is down;
        their answers ([] when given up)."""
        while True:
            try:
                batch = Batch()
                write(batch)
                sent_at = time.monotonic()
                answers = batch.send(self.conn)
                self.health.ok(sent_at)
                return answers
            except REDIS_DOWN as exc:
                self.health.lost(exc)
                if self._stop.is_set() and self.health.failures > 3:
                    log.error("stopping with a finished command unrecorded; it stays in %s", self.processing)
                    return []
                delay = self.health.backoff_seconds()
                if self._stop.is_set():
                    time.sleep(min(delay, 0.5))  # stopping: a few quick tries, then give up
                else:
                    self._stop.wait(delay)


def done_record(reply_text: str, ts: float) -> str:
    """The done record around the reply's JSON as pushed (redacted already, by the same two passes):
    what `{"state": "done", "reply": …, "ts": ts}` encodes to, without a third pass of the
    redactor over the same reply (the rest is the router's own words and clock)."""
    return f'{{"state": "done", "reply": {reply_text}, "ts": {float(ts)!r}}}'
