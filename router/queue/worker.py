"""The router loop: take a command reliably, check it, run its skill at most once, reply.

Each Redis login that sends commands has its own queue (`router.queue.senders`); the worker runs one
loop per queue (`router.queue.taker`): the agent's in the calling thread (it also does the
housekeeping: decided approvals, the audit stream, dead letters' age), every other login's in a
thread of its own. Each takes with BLMOVE into this router's processing list of its queue, so a
command is never only in memory, and each command runs under the origin its queue's login may
send, never the one its envelope states alone.

Done: store the idempotency record, push the (redacted) reply to the sender's reply key with a TTL,
then remove the command from the processing list, in that order, so a crash between any two steps
is recovered by re-sending the stored reply. (No MULTI/EXEC: Redis before the fix of
redis/redis#14541 silently drops transactions replayed from the AOF when the default user is
off, which SafeClaw requires.) Recovery (at start, after Redis comes back, and every heartbeat
period) re-handles what is left in this router's lists and moves over the lists of routers whose
heartbeat is gone, queue by queue. Side-effecting commands keep a record per id: never started ->
run; done -> re-send the stored reply; started, not done -> `unknown`. A skill that raises is
retried up to `max_attempts` only when it has no side effect; a side-effecting one is answered
`unknown` at once. Either way the command ends in the dead-letter list with the reason. A
side-effecting skill's `request_failed` (timeout, 5xx) is answered `unknown` too: the request may
have acted before its answer was lost.

A command's way, in the order a reader follows it: `taker` takes it from its queue and makes it one
`CommandRun` (`command_run`: the envelope, its plan, its approval, its clock), `router.pipeline`
decodes and plans it, `handoff` puts a platform's command in that platform's lane (`lanes`),
`triage` moves the run through its stages (read ahead, checks, claim, audit line, run, answer),
`deadline` runs its skill within the command's deadline and `results` writes its reply and record
(`records`: the idempotency and intent records). Around it: `heartbeat` beats, `redis_io` connects
and tracks whether Redis answers. The worker builds the policy (`router.policy.checks`) with the
approval flow's hold and the audit recorder (`router.audit`); an approved command is its stored
envelope run again as a run that carries the approval (`Handoff.run_approved`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import redis

from protocol.commands import CommandEnvelope
from protocol.hidden import HiddenValues
from protocol.keys import AGENT_LOGIN
from protocol.redis_cluster import disconnect_idle
from router.audit.recorder import AuditRecorder
from router.config.settings import RouterSettings
from router.errors import ConfigError
from router.pipeline import Pipeline
from router.platforms import close_kept
from router.policy.approval_flow import ApprovalFlow, Settle
from router.policy.checks import Policy
from router.queue.dead_letter import DeadLetters
from router.queue.heartbeat import Heartbeat
from router.queue.lanes import Lanes
from router.queue.records import CommandRecords
from router.queue.redis_io import REDIS_DOWN, RedisHealth
from router.queue.senders import sender_of, senders_of
from router.queue.taker import QueueTaker
from router.queue.timers import Timers
from router.redaction import Redactor
from router.registry import Skill

log = logging.getLogger("safeclaw.router.worker")
APPROVAL_POLL_SECONDS = 0.25  # how often decided approvals are looked for between commands
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
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )
        self.records = CommandRecords(self.conn, settings)
        self.stop_event = threading.Event()
        self.health = RedisHealth(on_back=self._recover_soon)
        self.timers = Timers()  # one thread for every command's deadlines
        self.heartbeat = Heartbeat(settings, sorted(self.skills), self.credentials, self.policy, self.audit,
                                   self.dead_letters, self.stop_event)
        self.lanes = Lanes(settings.platform_concurrency, settings.platform_backlog)
        self._next_poll = 0.0
        self.senders = senders_of(self.keys)
        # One loop per sending login's queue; the agent's (the first) also does the housekeeping.
        self.takers = {sender.login: QueueTaker(self, sender, primary=sender.login == AGENT_LOGIN)
                       for sender in self.senders}
        self._failure: ConfigError | None = None

    def taker(self, login: str) -> QueueTaker:
        return self.takers[login]

    # -- lifecycle -------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loops to exit after the commands in hand (safe from a signal handler)."""
        self.stop_event.set()

    def run(self) -> None:
        beat = threading.Thread(target=self.heartbeat.loop, args=(self.conn,), name="router-heartbeat",
                                daemon=True)
        beat.start()
        log.info("router %s started; skills: %s", self.settings.router_id, ", ".join(sorted(self.skills)))
        primary, *others = self.takers.values()
        loops = [threading.Thread(target=self._loop, args=(taker,), name=f"queue-{taker.sender.login}",
                                  daemon=True) for taker in others]
        try:
            for thread in loops:
                thread.start()
            primary.loop()
        finally:
            self.stop_event.set()
            for thread in loops:  # each ends its wait for a command and answers what it took
                thread.join(timeout=self.settings.block_seconds + 30)
            # Bounded: the running commands get their grace (each is answered by its deadline
            # anyway), the waiting ones stay in our lists for the next start's recovery.
            left = self.lanes.shutdown(SHUTDOWN_GRACE_SECONDS)
            if left:
                log.warning("stopping with %d command(s) still at their platform; the next start "
                            "recovers them from %s", left,
                            ", ".join(t.processing for t in self.takers.values()))
            close_kept()  # the lanes' platform clients and their connections
            beat.join(timeout=5)
            self._clear_heartbeat()
            self.audit.flush(self.conn)
            self.conn.close()
            self.audit.close()
            log.info("router %s stopped", self.settings.router_id)
        if self._failure is not None:
            raise self._failure

    def _loop(self, taker: QueueTaker) -> None:
        """Another login's queue, in its own thread: a refused login stops the whole router."""
        try:
            taker.loop()
        except ConfigError as exc:
            self._failure = exc
            self.stop_event.set()

    def housekeeping(self) -> None:
        """Between commands, a few times a second (the agent's loop): decided approvals run, the
        audit stream gets its new lines."""
        if time.monotonic() >= self._next_poll and not self.stop_event.is_set():
            self._next_poll = time.monotonic() + APPROVAL_POLL_SECONDS
            self.approvals.poll(self.run_approved)
            self.audit.flush(self.conn)

    def recover_approvals(self) -> None:
        """At recovery: dead letters aged out, and the approvals this router held when it stopped."""
        self.dead_letters.age_out(self.conn)
        self.approvals.poll(self.run_approved, recovering=True)

    def run_approved(self, envelope: CommandEnvelope, approval: Mapping[str, Any], settle: Settle) -> bool:
        """An approved command runs in the loop of the login that sent it: its reply goes to that
        login's replies (its stored origin, attached by that loop, says which)."""
        sender = sender_of(envelope.origin, self.senders)
        return self.takers[sender.login].handoff.run_approved(envelope, approval, settle)

    def _recover_soon(self) -> None:
        for taker in self.takers.values():  # Redis is back: re-handle anything left in our lists
            taker.next_recovery = 0.0
        # Idle pooled connections still point at the Redis that went away: a lane taking one
        # would fail once more and report a second outage.
        disconnect_idle(self.conn)

    # -- heartbeat -------------------------------------------------------------------------
    def heartbeat_value(self, dead_letters: int | None = None, conn: redis.Redis | None = None) -> str:
        return self.heartbeat.value(dead_letters, conn)

    def _clear_heartbeat(self) -> None:
        with contextlib.suppress(*REDIS_DOWN):  # else it expires on its own
            self.conn.delete(self.keys.router_heartbeat(self.settings.router_id))
