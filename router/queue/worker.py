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

Around the loop (this package): `triage` decides each command's answer and writes its audit line,
`deadline` runs a skill within its command's deadline, `results` writes results (and sets an item
aside), `records` keeps the idempotency and intent records, `heartbeat` beats, `handoff` hands a
command to its platform's lane (`lanes`) and `redis_io` connects and tracks whether Redis answers.
The worker builds the policy (`router.policy.checks`) with the approval flow's hold and the audit
recorder (`router.audit`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Mapping

import redis

from protocol.commands import CommandEnvelope
from protocol.hidden import HiddenValues
from protocol.replies import Reply
from protocol.wire import ProtocolError
from router.audit.recorder import AuditRecorder
from router.config.settings import RouterSettings
from router.errors import ConfigError, describe
from router.pipeline import Pipeline, Planned, decode, readable_id
from router.platforms import close_kept
from router.policy.approval_flow import ApprovalFlow
from router.policy.checks import Policy
from router.queue.containment import contain
from router.queue.dead_letter import DeadLetters
from router.queue.deadline import DeadlineRunner, is_own_read
from router.queue.handoff import Handoff
from router.queue.heartbeat import Heartbeat
from router.queue.lanes import InFlight, Lanes
from router.queue.records import CommandRecords
from router.queue.redis_io import REDIS_DOWN, RedisHealth, as_bytes
from router.queue.results import Answer, ResultWriter
from router.queue.timers import Timers
from router.queue.triage import Decider
from router.redaction import Redactor
from router.registry import Skill

log = logging.getLogger("safeclaw.router.worker")
APPROVAL_POLL_SECONDS = 0.25  # how often decided approvals are looked for between commands
MAX_BATCH = 8  # commands taken from a busy queue in one round trip
SHUTDOWN_GRACE_SECONDS = 5.0  # how long a stopping router waits for commands at their platform


class Worker:
    def __init__(
        self, settings: RouterSettings, skills: Mapping[str, Skill], credentials: Mapping[str, str],
        redactor: Redactor, conn: redis.Redis,
    ) -> None:
        """`conn`: the process's one Redis pool (`router.app`), used by every part of the worker."""
        self.settings = settings
        self.keys = settings.keys
        self.skills = dict(skills)
        self.credentials = HiddenValues(credentials)  # printed, names only
        self.redactor = redactor
        self.conn = conn
        self.audit = AuditRecorder(settings, self.redactor)
        self.approvals = ApprovalFlow(settings, self.redactor, self.audit, conn)
        self.policy = Policy(settings, self.skills, self.redactor, hold=self.approvals.hold)
        self.pipeline = Pipeline(self.skills, self.policy, self.redactor, settings.max_attempts)
        self.processing = self.keys.processing(settings.router_id)
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )
        self.records = CommandRecords(self.conn, settings)
        self._stop = threading.Event()
        self.health = RedisHealth(on_back=self._recover_soon)
        self.results = ResultWriter(self.conn, settings, self.redactor, self.pipeline.redact, self.audit,
                                    self.dead_letters, self.health, self._stop)
        self.timers = Timers()  # one thread for every command's deadlines
        self.runner = DeadlineRunner(settings, self.credentials, self.pipeline, self.policy, self.approvals,
                                     self.audit, self.results, self.conn, self.timers)
        self.heartbeat = Heartbeat(settings, sorted(self.skills), self.credentials, self.policy, self.audit,
                                   self.dead_letters, self._stop)
        self.decider = Decider(settings, self.records, self.approvals, self.audit, self.pipeline, self.runner,
                               self.results, self.conn)
        self._next_recovery = 0.0
        self._next_poll = 0.0
        # Commands moved into our processing list by the last replies' round trip: while the queue
        # is busy, one round trip answers a batch and takes the next (not a BLMOVE per command).
        self._taken: list[bytes] = []
        self._take = 1
        self.lanes = Lanes(settings.platform_concurrency, settings.platform_backlog)
        self.in_flight = InFlight()
        self.handoff = Handoff(
            self.lanes, self.in_flight, self.pipeline, self.decider, self.results, self.audit, self.health,
            lambda raw, envelope, planned, recovering, started, taken_at: self._complete(
                raw, envelope, planned, recovering, started, taken_at=taken_at),
            self._set_aside, self.timers)

    # -- lifecycle -------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to exit after the commands in hand (safe from a signal handler)."""
        self._stop.set()

    def run(self) -> None:
        beat = threading.Thread(target=self.heartbeat.loop, args=(self.conn,), name="router-heartbeat",
                                daemon=True)
        beat.start()
        log.info("router %s started; skills: %s", self.settings.router_id, ", ".join(sorted(self.skills)))
        try:
            while not self._stop.is_set() or self._taken:
                self._step()
        finally:
            self._stop.set()
            # Bounded: the running commands get their grace (each is answered by its deadline
            # anyway), the waiting ones stay in our list for the next start's recovery.
            left = self.lanes.shutdown(SHUTDOWN_GRACE_SECONDS)
            if left:
                log.warning("stopping with %d command(s) still at their platform; the next start "
                            "recovers them from %s", left, self.processing)
            close_kept()  # the lanes' platform clients and their connections
            beat.join(timeout=5)
            self._clear_heartbeat()
            self.audit.flush(self.conn)
            self.conn.close()
            self.audit.close()
            log.info("router %s stopped", self.settings.router_id)

    def _step(self) -> None:
        try:
            batch, self._taken = self._taken, []  # taken with the last replies: handled first
            if not batch and time.monotonic() >= self._next_recovery:
                self._recover()
                self._next_recovery = time.monotonic() + self.settings.heartbeat_ttl
            if time.monotonic() >= self._next_poll and not self._stop.is_set():  # rare: not per command
                self._next_poll = time.monotonic() + APPROVAL_POLL_SECONDS
                self.approvals.poll(self.handoff.run_approved)
                self.audit.flush(self.conn)
            if not batch:
                raw = self.conn.blmove(self.keys.command_queue, self.processing, self.settings.block_seconds,
                                       "RIGHT", "LEFT")
                self.health.ok()
                batch = [] if raw is None else [as_bytes(raw)]
            if batch:
                self._handle_batch(batch)
        except redis.AuthenticationError as exc:
            raise ConfigError(f"Redis refused the router's login ({exc}); check REDIS_URL") from None
        except redis.RedisError as exc:  # any answer but a login refused: Redis does not serve us now
            self.health.lost(exc)
            self._stop.wait(self.health.backoff_seconds())
        except BaseException as exc:  # no item's failure, whatever its type, ends the loop
            log.error("router loop error (%s); going on", describe(exc), exc_info=True)
            self._stop.wait(1.0)

    def _recover_soon(self) -> None:
        self._next_recovery = 0.0  # Redis is back: re-handle anything left in our processing list
        # Idle pooled connections still point at the Redis that went away: a lane taking one
        # would fail once more and report a second outage.
        self.conn.connection_pool.disconnect(inuse_connections=False)

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
        self.approvals.poll(self.handoff.run_approved, recovering=True)
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
    def _handle_batch(self, batch: list[bytes]) -> None:
        """Handle commands taken together; those answered here (not in a lane) are answered in one
        round trip that also takes the next ones, unless a recovery is due (it must find none
        taken and unhandled) or the router is stopping."""
        answers: list[Answer] = []
        handled = False
        try:
            for raw in batch:
                self._handle(raw, answers=answers)
            handled = True
        finally:  # Redis went away mid-batch: answer those decided; the rest stay in our list
            more = handled and not self._stop.is_set() and time.monotonic() < self._next_recovery
            take = self._take if more else 0
            if answers:
                try:
                    self._taken = self.results.finish_all(answers, take, self.settings.block_seconds)
                except REDIS_DOWN:
                    raise
                except Exception as exc:
                    reason = describe(exc)
                    log.error("router error answering %d command(s): %s", len(answers), reason, exc_info=True)
                    for answer in answers:
                        self._set_aside(answer.raw, reason)
                # Next time, as many as were left waiting (non-blocking moves), else one move
                # that waits for the next command (an idle router).
                self._take = min(MAX_BATCH, self.results.queued) or 1

    def _handle(self, raw: bytes, recovering: bool = False, answers: list[Answer] | None = None) -> None:
        """Answer one queue item. Whatever goes wrong short of Redis being unavailable, the item
        ends dead-lettered with its reason and the loop goes on."""
        started = time.monotonic()
        contain(lambda: self._handle_item(raw, recovering, answers, started),
                lambda reason: self._set_aside(raw, reason), "a command")

    def _handle_item(self, raw: bytes, recovering: bool, answers: list[Answer] | None,
                     started: float) -> None:
        try:
            envelope = decode(raw)
        except ProtocolError as exc:
            reason = f"malformed command: {exc}"
            command_id = readable_id(raw)
            self.results.dead_letter(raw, None, reason, command_id)
            self.audit.malformed(command_id, str(exc))
            return
        planned = self.pipeline.plan(envelope)
        if isinstance(planned, Planned) and not is_own_read(planned.effect):
            self.handoff.to_lane(raw, planned, recovering, started)
        else:
            self._complete(raw, envelope, planned, recovering, started, answers)

    def _complete(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply, recovering: bool,
                  started: float, answers: list[Answer] | None = None, taken_at: float | None = None) -> None:
        """Decide and answer one command, or add its answer to `answers` (written by the caller)."""
        contain(lambda: self._decide_and_answer(raw, envelope, planned, recovering, started, answers,
                                                taken_at), lambda reason: self._set_aside(raw, reason),
                f"command {envelope.id}")

    def _decide_and_answer(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply,
                           recovering: bool, started: float, answers: list[Answer] | None,
                           taken_at: float | None = None) -> None:
        reply, record = self.decider.decide(envelope, planned, raw, recovering, taken_at=taken_at)
        if reply is None:
            return
        if answers is None:
            self.results.finish(raw, reply, record, recovering)
        else:
            answers.append(Answer(raw, reply, record, recovering))
        # A PING answered ok is not worth a log line (it was a third of its own cost).
        quiet = isinstance(planned, Planned) and is_own_read(planned.effect) and reply.status == "ok"
        level = logging.DEBUG if quiet else logging.INFO
        log.log(level, "command %s %s -> %s in %.0f ms", envelope.id, envelope.action, reply.status,
                (time.monotonic() - started) * 1000)

    def _set_aside(self, raw: bytes, reason: str) -> None:
        self.results.set_aside(raw, reason, self.skills)
