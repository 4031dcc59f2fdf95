"""One sending login's queue, taken by a loop of its own (`router.queue.worker` runs one per queue).

Take: BLMOVE from the login's queue into this router's processing list of that queue, so a command
is never only in memory. Done: the results' round trip (`router.queue.results`) stores the record,
pushes the reply to the login's reply keys and removes the command from the list; while the queue
is busy the same round trip takes the next commands with non-blocking moves, and only a loop that
holds nothing blocks (each queue's own: a command taken from one queue never waits on another's).
Recovery re-handles what is left in this router's list of the queue and moves over the lists of
the same queue of routers whose heartbeat is gone.

Each command runs under the origin its login may send (`router.queue.senders`): one stating
another is dead-lettered with the reason and answered, never run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Protocol

import redis

from protocol.commands import CommandEnvelope
from protocol.hidden import HiddenValues
from protocol.replies import Reply, Status
from protocol.wire import ProtocolError
from router.audit.recorder import AuditRecorder
from router.config.settings import RouterSettings
from router.errors import ConfigError, describe
from router.pipeline import Pipeline, decode, readable_id
from router.policy.approval_flow import ApprovalFlow
from router.policy.checks import Policy
from router.queue.command_run import CommandRun
from router.queue.containment import contain
from router.queue.dead_letter import DeadLetters
from router.queue.deadline import DeadlineRunner, is_own_read
from router.queue.handoff import Handoff
from router.queue.heartbeat import Heartbeat
from router.queue.lanes import InFlight, Lanes
from router.queue.records import CommandRecords
from router.queue.redis_io import REDIS_DOWN, RedisHealth, as_bytes
from router.queue.results import Answer, ResultWriter
from router.queue.senders import ORIGIN_REFUSED, OriginRefused, Sender, with_sender_origin
from router.queue.timers import Timers
from router.queue.triage import Decider
from router.redaction import Redactor
from router.registry import Skill

log = logging.getLogger("safeclaw.router.worker")
MAX_BATCH = 8  # commands taken from a busy queue in one round trip


class RouterParts(Protocol):
    """What every queue's loop shares with the others, built once by `router.queue.worker.Worker`
    (named here by shape, so this module needs nothing from the worker's)."""

    settings: RouterSettings
    conn: redis.Redis
    skills: dict[str, Skill]
    credentials: HiddenValues
    redactor: Redactor
    audit: AuditRecorder
    approvals: ApprovalFlow
    policy: Policy
    pipeline: Pipeline
    dead_letters: DeadLetters
    records: CommandRecords
    stop_event: threading.Event
    health: RedisHealth
    timers: Timers
    heartbeat: Heartbeat
    lanes: Lanes
    senders: tuple[Sender, ...]

    def housekeeping(self) -> None: ...
    def recover_approvals(self) -> None: ...


class QueueTaker:
    def __init__(self, worker: RouterParts, sender: Sender, primary: bool) -> None:
        """`primary`: this loop also does the router's housekeeping between commands (decided
        approvals, the audit stream, dead letters' age)."""
        self.worker = worker
        self.sender = sender
        self.primary = primary
        self.conn = worker.conn
        self.settings = settings = worker.settings
        self.processing = settings.keys.processing_of(sender.login, settings.router_id)
        self.in_flight = InFlight()
        conn, audit, pipeline = worker.conn, worker.audit, worker.pipeline
        self.results = ResultWriter(conn, settings, worker.redactor, pipeline.redact, audit,
                                    worker.dead_letters, worker.health, worker.stop_event, sender)
        self.runner = DeadlineRunner(settings, worker.credentials, pipeline, worker.policy, audit,
                                     self.results, conn, worker.timers)
        self.decider = Decider(settings, worker.records, worker.approvals, audit, pipeline, self.runner,
                               self.results, conn)
        self.handoff = Handoff(worker.lanes, self.in_flight, pipeline, self.decider, self.results, audit,
                               worker.health, worker.timers)
        self.next_recovery = 0.0
        # Commands moved into our processing list by the last replies' round trip: while the queue
        # is busy, one round trip answers a batch and takes the next (not a BLMOVE per command).
        self.taken: list[bytes] = []
        self._take = 1

    def loop(self) -> None:
        """Take and answer until the router stops; the commands taken with the last replies first."""
        while not self.worker.stop_event.is_set() or self.taken:
            self.step()

    def step(self) -> None:
        worker = self.worker
        if worker.heartbeat.guard.refused:  # Redis may drop keys or is not the primary (redis_guard)
            self.taken, self.next_recovery = [], 0.0  # left in our list, recovered once it is fit
            worker.stop_event.wait(1.0)
            return
        try:
            batch, self.taken = self.taken, []  # taken with the last replies: handled first
            if not batch and time.monotonic() >= self.next_recovery:
                self.recover()
                self.next_recovery = time.monotonic() + self.settings.heartbeat_ttl
            if self.primary:
                worker.housekeeping()
            if not batch:
                sent_at = time.monotonic()
                raw = self.conn.blmove(self.sender.queue, self.processing, self.settings.block_seconds,
                                       "RIGHT", "LEFT")
                worker.health.ok(sent_at)
                batch = [] if raw is None else [as_bytes(raw)]
            if batch:
                self.handle_batch(batch)
        except redis.AuthenticationError as exc:
            raise ConfigError(f"Redis refused the router's login ({exc}); check REDIS_URL") from None
        except redis.RedisError as exc:  # any answer but a login refused: Redis does not serve us now
            worker.health.lost(exc)
            worker.stop_event.wait(worker.health.backoff_seconds())
        except BaseException as exc:  # no item's failure, whatever its type, ends the loop
            log.error("router loop error (%s); going on", describe(exc), exc_info=True)
            worker.stop_event.wait(1.0)

    # -- recovery --------------------------------------------------------------------------
    def recover(self) -> None:
        """Re-handle what is left in our list of this queue, then take over the lists of this queue
        of dead routers. Each step is contained: one item that cannot be handled is dead-lettered."""
        keys, router_id = self.settings.keys, self.settings.router_id
        # Our heartbeat is up before we take anything (at start, and after Redis comes back), so
        # no other router mistakes the commands in our list for a dead router's.
        self.worker.heartbeat.beat(self.conn)
        if self.primary:
            self.worker.recover_approvals()
        skipped: Counter[bytes] = Counter()
        for item in reversed(self.conn.lrange(self.processing, 0, -1)):  # oldest first
            raw = as_bytes(item)
            if skipped[raw] < self.in_flight.count(raw):  # being handled right now, in a lane
                skipped[raw] += 1
                continue
            log.info("recovering a command left in %s", self.processing)
            self.handle(raw, recovering=True)
        prefix = keys.processing_of(self.sender.login, "").encode()
        for key in self.conn.scan_iter(match=keys.processing_of(self.sender.login, "*").encode(), count=100):
            other = as_bytes(key)[len(prefix) :].decode("utf-8", "replace")
            if other == router_id or self.conn.exists(keys.router_heartbeat(other)):
                continue
            while not self.worker.stop_event.is_set():
                moved = self.conn.lmove(key, self.processing, "RIGHT", "LEFT")
                if moved is None:
                    break
                log.info("recovering a command of router %s from %s (its heartbeat is gone)", other,
                         self.sender.queue)
                self.handle(as_bytes(moved), recovering=True)

    # -- one command -----------------------------------------------------------------------
    def handle_batch(self, batch: list[bytes]) -> None:
        """Handle commands taken together; those answered here (not in a lane) are answered in one
        round trip that also takes the next ones, unless a recovery is due (it must find none
        taken and unhandled) or the router is stopping."""
        answers: list[Answer] = []
        handled = False
        try:
            for raw in batch:
                self.handle(raw, answers=answers)
            handled = True
        finally:  # Redis went away mid-batch: answer those decided; the rest stay in our list
            more = handled and not self.worker.stop_event.is_set() and time.monotonic() < self.next_recovery
            take = self._take if more else 0
            if answers:
                try:
                    self.taken = self.results.finish_all(answers, take, self.settings.block_seconds)
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

    def handle(self, raw: bytes, recovering: bool = False, answers: list[Answer] | None = None) -> None:
        """Answer one queue item. Whatever goes wrong short of Redis being unavailable, the item
        ends dead-lettered with its reason and the loop goes on."""
        started = time.monotonic()
        contain(lambda: self._handle_item(raw, recovering, answers, started),
                lambda reason: self._set_aside(raw, reason), "a command")

    def _handle_item(self, raw: bytes, recovering: bool, answers: list[Answer] | None,
                     started: float) -> None:
        try:
            stated = decode(raw)
        except ProtocolError as exc:
            reason = f"malformed command: {exc}"
            command_id = readable_id(raw)
            self.results.dead_letter(raw, None, reason, command_id)
            self.worker.audit.malformed(command_id, str(exc))
            return
        try:
            envelope = with_sender_origin(stated, self.sender, self.worker.senders)
        except OriginRefused as exc:
            self._refuse_origin(raw, stated, str(exc))
            return
        run = CommandRun(raw, envelope, self.worker.pipeline.plan(envelope), recovering, started=started)
        if run.effect is not None and not is_own_read(run.effect):
            self.handoff.to_lane(run)
        else:
            self.decider.complete(run, answers)

    def _refuse_origin(self, raw: bytes, stated: CommandEnvelope, reason: str) -> None:
        """Dead-letter (and answer) a command whose origin its login may not send; its audit line
        shows the origin it claimed."""
        log.warning("command %s on %s refused: %s", stated.id, self.sender.queue, reason)
        self.worker.audit.command(stated, Reply(stated.id, Status.DENIED, reason, error=ORIGIN_REFUSED), None)
        self.results.dead_letter(raw, stated.action, reason, stated.id, ORIGIN_REFUSED, Status.DENIED)

    def _set_aside(self, raw: bytes, reason: str) -> None:
        self.results.set_aside(raw, reason, self.worker.skills)
