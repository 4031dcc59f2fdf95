"""The router loop: take a command reliably, check it, run its skill at most once, reply.

Take: BLMOVE from the command queue into this router's processing list, so a command is never
only in memory. Done: store the idempotency record, push the (redacted) reply with a TTL, then
remove the command from the processing list, in that order, so a crash between any two steps
is recovered by re-sending the stored reply. (No MULTI/EXEC: Redis before the fix of
redis/redis#14541 silently drops transactions replayed from the AOF when the default user is
off, which SafeClaw requires.) Recovery (at start, after Redis comes
back, and every heartbeat period) re-handles what is left in this router's list and moves over
the lists of routers whose heartbeat is gone. Side-effecting commands keep a record per id:
never started -> run; done -> re-send the stored reply; started, not done -> `unknown`.
A skill that raises is retried up to `max_attempts` only when it has no side effect; a
side-effecting one is answered `unknown` at once. Either way the command ends in the
dead-letter list with the reason. A side-effecting skill's `request_failed` (timeout, 5xx) is
answered `unknown` too: the request may have acted before its answer was lost.

Around the loop: `router.deadline` runs a skill within its command's deadline, `router.results`
writes results, `router.records` keeps the idempotency and intent records, `router.heartbeat`
beats, `router.lanes` runs commands per platform and `router.redis_io` connects and tracks
whether Redis answers.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import redis

from protocol import CommandEnvelope, ProtocolError, Reply, Status, is_command_id
from router.control_plane import APPROVAL_DECISION, RouterControl, Settle
from router.credentials import secret_values
from router.dead_letter import DeadLetters
from router.deadline import DeadlineRunner, is_own_read
from router.errors import ConfigError
from router.heartbeat import Heartbeat
from router.lanes import InFlight, Lanes
from router.pipeline import Pipeline, Planned, decode
from router.policy import Policy
from router.records import ID_REUSED, CommandRecords
from router.redaction import Redactor
from router.redis_io import REDIS_DOWN, RedisHealth, as_bytes, connect
from router.registry import Skill
from router.results import ResultWriter
from router.settings import RouterSettings

log = logging.getLogger("safeclaw.router.worker")
APPROVAL_POLL_SECONDS = 0.25  # how often decided approvals are looked for between commands


class Worker:
    def __init__(
        self, settings: RouterSettings, skills: Mapping[str, Skill], credentials: Mapping[str, str],
        redactor: Redactor | None = None,
    ) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.skills = dict(skills)
        self.credentials = dict(credentials)
        self.redactor = redactor or Redactor(secret_values(settings.env, credentials))
        self.policy = Policy(settings, self.skills)
        self.pipeline = Pipeline(self.skills, self.policy, self.redactor, settings.max_attempts)
        self.control = RouterControl(settings, self.policy, self.redactor)
        self.processing = self.keys.processing(settings.router_id)
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )
        self.conn = connect(settings)
        self.records = CommandRecords(self.conn, settings)
        self._stop = threading.Event()
        self.health = RedisHealth(on_back=self._recover_soon)
        self.results = ResultWriter(self.conn, settings, self.redactor, self.pipeline.redact, self.control,
                                    self.dead_letters, self.health, self._stop)
        self.runner = DeadlineRunner(settings, self.credentials, self.pipeline, self.policy, self.control,
                                     self.results, self.conn)
        self.heartbeat = Heartbeat(settings, sorted(self.skills), self.credentials, self.policy, self.control,
                                   self.dead_letters, self._stop)
        self._next_recovery = 0.0
        self._next_poll = 0.0
        self.lanes = Lanes(settings.platform_concurrency, settings.platform_backlog)
        self.in_flight = InFlight()

    # -- lifecycle -------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to exit after the commands in hand (safe from a signal handler)."""
        self._stop.set()

    def run(self) -> None:
        beat = threading.Thread(target=self.heartbeat.loop, name="router-heartbeat", daemon=True)
        beat.start()
        log.info("router %s started; skills: %s", self.settings.router_id, ", ".join(sorted(self.skills)))
        try:
            while not self._stop.is_set():
                self._step()
        finally:
            self._stop.set()
            self.lanes.shutdown()  # the commands in hand finish and are answered
            beat.join(timeout=5)
            self._clear_heartbeat()
            self.conn.close()
            self.control.close()
            log.info("router %s stopped", self.settings.router_id)

    def _step(self) -> None:
        try:
            if time.monotonic() >= self._next_recovery:
                self._recover()
                self._next_recovery = time.monotonic() + self.settings.heartbeat_ttl
            if time.monotonic() >= self._next_poll:  # approvals are rare: not a round trip per command
                self._next_poll = time.monotonic() + APPROVAL_POLL_SECONDS
                self.control.poll(self._run_approved)
                self.control.flush()
            raw = self.conn.blmove(self.keys.command_queue, self.processing, self.settings.block_seconds,
                                   "RIGHT", "LEFT")
            self.health.ok()
            if raw is not None:
                self._handle(as_bytes(raw))
        except redis.AuthenticationError as exc:
            raise ConfigError(f"Redis refused the router's login ({exc}); check REDIS_URL") from None
        except REDIS_DOWN as exc:
            self.health.lost(exc)
            self._stop.wait(self.health.backoff_seconds())

    def _recover_soon(self) -> None:
        self._next_recovery = 0.0  # Redis is back: re-handle anything left in our processing list

    # -- heartbeat -------------------------------------------------------------------------
    def heartbeat_value(self, dead_letters: int | None = None, conn: redis.Redis | None = None) -> str:
        return self.heartbeat.value(dead_letters, conn)

    def _clear_heartbeat(self) -> None:
        with contextlib.suppress(*REDIS_DOWN):  # else it expires on its own
            self.conn.delete(self.keys.router_heartbeat(self.settings.router_id))

    # -- recovery --------------------------------------------------------------------------
    def _recover(self) -> None:
        """Re-handle what is left in our list, then take over the lists of dead routers. Each step
        is contained: one item that cannot be handled is dead-lettered, never a stop."""
        # Our heartbeat is up before we take anything (at start, and after Redis comes back), so
        # no other router mistakes the commands in our list for a dead router's.
        self.heartbeat.beat(self.conn)
        self.dead_letters.age_out(self.conn)
        self.control.poll(self._run_approved, recovering=True)
        skipped: Counter[bytes] = Counter()
        for item in reversed(self.conn.lrange(self.processing, 0, -1)):  # oldest first
            raw = as_bytes(item)
            if skipped[raw] < self.in_flight.count(raw):  # being handled right now, in a lane
                skipped[raw] += 1
                continue
            log.info("recovering a command left in %s", self.processing)
            self._handle(raw, recovering=True)
        prefix = self.keys.processing("").encode()
        for key in self.conn.scan_iter(match=self.keys.processing("*").encode(), count=100):
            other = as_bytes(key)[len(prefix) :].decode("utf-8", "replace")
            if other == self.settings.router_id or self.conn.exists(self.keys.router_heartbeat(other)):
                continue
            while not self._stop.is_set():
                moved = self.conn.lmove(key, self.processing, "RIGHT", "LEFT")
                if moved is None:
                    break
                log.info("recovering a command of router %s (its heartbeat is gone)", other)
                self._handle(as_bytes(moved), recovering=True)

    # -- one command -----------------------------------------------------------------------
    def _handle(self, raw: bytes, recovering: bool = False) -> None:
        """Answer one queue item. Whatever goes wrong short of Redis being down, the item ends
        dead-lettered with its reason and the loop goes on."""
        started = time.monotonic()
        try:
            envelope = decode(raw)
        except ProtocolError as exc:
            reason = f"malformed command: {exc}"
            self._contained(self.results.dead_letter, raw, None, reason, readable_id(raw))
            self.control.malformed(readable_id(raw), str(exc))
            return
        planned = self.pipeline.plan(envelope)
        if isinstance(planned, Planned) and not is_own_read(planned.effect):
            self._to_lane(raw, planned, recovering, started)
        else:
            self._complete(raw, envelope, planned, recovering, started)

    def _to_lane(self, raw: bytes, planned: Planned, recovering: bool, started: float) -> None:
        """Hand a command to its platform's lane; answer `busy` (not run) when the lane is full."""
        self.in_flight.add(raw)

        def task() -> None:
            try:
                self._complete(raw, planned.envelope, planned, recovering, started)
            except REDIS_DOWN as exc:  # the command stays in our list; recovery takes it up again
                self.health.lost(exc)
            finally:
                self.in_flight.remove(raw)

        if not self.lanes.submit(planned.effect.platform, task):
            self.in_flight.remove(raw)
            envelope, platform = planned.envelope, planned.effect.platform
            message = (f"{envelope.action} was not run: the router has {self.lanes.pending(platform)} "
                       f"commands for {platform} in hand; try again shortly")
            busy = Reply(envelope.id, Status.ERROR, message, error="busy", extra={"retry_after": 5})
            self.results.finish(raw, busy, False)

    def _complete(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply, recovering: bool,
                  started: float) -> None:
        try:
            reply, record = self._decide(envelope, planned, raw, recovering)
            if reply is not None:
                self.control.after(envelope, reply)
                self.results.finish(raw, reply, record)
                # A PING answered ok is not worth a log line (it was a third of its own cost).
                quiet = isinstance(planned, Planned) and is_own_read(planned.effect) and reply.status == "ok"
                level = logging.DEBUG if quiet else logging.INFO
                log.log(level, "command %s %s -> %s in %.0f ms", envelope.id, envelope.action, reply.status,
                        (time.monotonic() - started) * 1000)
        except REDIS_DOWN:
            raise
        except Exception as exc:  # a bug must not wedge the queue: set the command aside
            log.exception("router error on command %s", envelope.id)
            self._contained(self.results.dead_letter, raw, envelope.action,
                            f"router error: {type(exc).__name__}: {exc}", envelope.id, "internal_error")

    def _contained(self, step: Any, *args: Any) -> None:
        """Run a dead-lettering step; if even that fails, drop the item from our list so it cannot
        stop this router (or the next) again."""
        try:
            step(*args)
        except REDIS_DOWN:
            raise
        except Exception:
            log.exception("could not dead-letter a command; dropping it from %s", self.processing)
            self.results.drop(args[0])

    def _run_approved(self, envelope: CommandEnvelope, settle: Settle) -> bool:
        """A command the owner approved: the same path as from the queue, in its platform's lane,
        past its own expiry (the approval's expiry rules it) and without asking again; the reply
        also goes to its key. False (nothing run) when the lane is full."""
        raw = envelope.to_json().encode("utf-8", "replace")
        planned = self.pipeline.plan(envelope)

        def task() -> None:
            reply, ran = None, False
            try:
                reply = self._approved_run(raw, envelope, planned)
                ran = True
            except REDIS_DOWN as exc:  # it stays held; recovery answers from its record
                self.health.lost(exc)
            except Exception:
                log.exception("router error on approved command %s", envelope.id)
            finally:
                settle(reply, ran)

        if isinstance(planned, Planned) and not is_own_read(planned.effect):
            return self.lanes.submit(planned.effect.platform, task)
        task()
        return True

    def _approved_run(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply) -> Reply | None:
        reply, record = self._decide(envelope, planned, raw, recovering=False, approved=True)
        self.control.forget(envelope.id)
        if reply is not None:
            self.results.finish(raw, reply, record)
        return reply

    def _decide(
        self, envelope: CommandEnvelope, planned: Planned | Reply, raw: bytes, recovering: bool,
        approved: bool = False,
    ) -> tuple[Reply | None, bool]:
        """The reply to send, and whether it completes an idempotency record."""
        if envelope.action == APPROVAL_DECISION:
            return self.control.relay(envelope), False
        side_effect = isinstance(planned, Planned) and planned.skill.side_effect
        if side_effect:
            stored = self.records.stored_reply(envelope)
            if stored is not None:  # an id_reused refusal must not overwrite the other's record
                return stored, stored.error != ID_REUSED
        if envelope.is_expired() and not approved:
            return Reply(envelope.id, Status.EXPIRED, "the command expired before the router ran it; "
                         "it was not run", error="expired"), False
        if not isinstance(planned, Planned):
            return planned, False
        if side_effect and envelope.intent:
            earlier = self.records.earlier_of_intent(envelope)
            if earlier is not None:  # before policy: the bounds would refuse it as a copy of itself
                return earlier, True
        refused = self.pipeline.check(planned, self.conn)
        if refused is not None:
            self.runner.record_outcome(planned, refused)
            return refused, False
        if recovering and not side_effect and self.records.too_many_attempts(envelope):
            reason = f"still unanswered after {self.settings.max_attempts} router restarts"
            self.results.dead_letter(raw, envelope.action, reason, None)
            return Reply(envelope.id, Status.ERROR, f"{envelope.action} failed {self.settings.max_attempts} "
                         "times and was set aside for the router's operator (dead-letter list)",
                         error="internal_error"), False
        if side_effect and envelope.intent:
            repeat = self.records.repeat_of(envelope)
            if repeat is not None:
                return repeat, True
        if side_effect and not self.records.claim(envelope):
            log.warning("command %s is already being run elsewhere; dropping this copy", envelope.id)
            self.results.drop(raw)
            return None, False
        outcome = self.runner.run(raw, planned, approved)
        if outcome is None:  # the deadline answered first
            return None, False
        if outcome.dead_letter is not None:
            self.results.dead_letter(raw, envelope.action, outcome.dead_letter, None)
        self.runner.record_outcome(planned, outcome.reply)
        return outcome.reply, side_effect


def readable_id(raw: bytes) -> str | None:
    """The command id of a malformed command, if one can be read, so its sender gets an answer."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if is_command_id(value) else None

