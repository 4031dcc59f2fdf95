"""Commands handed to their platform's lane (`router.queue.lanes`): those taken from the queue, and
those the owner approved.

A command from the queue is answered `busy` (not run) when its lane is full. Its clock runs from
when it was taken: still waiting at its deadline, it is answered `expired` (never run); dropped
unstarted at shutdown, it stays in the router's processing list for the next recovery, which skips
it while a lane holds it (`in_flight`). An approved command takes the same path past its own
expiry (the approval's rules it), and its reply also goes to the approval's settle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.audit.recorder import AuditRecorder
from router.errors import describe
from router.pipeline import Pipeline, Planned
from router.policy.approval_flow import Settle
from router.queue.command_run import CommandRun
from router.queue.containment import contain
from router.queue.deadline import is_own_read, seconds_left
from router.queue.lanes import InFlight, Lanes, Once
from router.queue.redis_io import REDIS_DOWN, RedisHealth
from router.queue.results import ResultWriter
from router.queue.timers import Deadline, Timers
from router.queue.triage import Decider

log = logging.getLogger("safeclaw.router.worker")


class Handoff:
    def __init__(
        self, lanes: Lanes, in_flight: InFlight, pipeline: Pipeline, decider: Decider, results: ResultWriter,
        audit: AuditRecorder, health: RedisHealth, timers: Timers,
    ) -> None:
        self.timers = timers
        self.lanes = lanes
        self.in_flight = in_flight
        self.pipeline = pipeline
        self.decider = decider
        self.results = results
        self.audit = audit
        self.health = health

    def to_lane(self, run: CommandRun) -> None:
        """Hand a run from the queue to its platform's lane; answer `busy` when it is full."""
        assert isinstance(run.planned, Planned)
        raw, planned = run.raw, run.planned
        self.in_flight.add(raw)
        gate = Once()  # the lane starting it, its deadline while it waits, or a shutdown: one only
        run.taken_at = time.time()
        timer: Deadline | None = None

        def task() -> None:
            if timer is not None:
                timer.cancel()
            if not gate.claim():
                return  # answered while it waited
            try:
                self.decider.complete(run)
            except REDIS_DOWN as exc:  # the command stays in our list; recovery takes it up again
                self.health.lost(exc)
            finally:
                self.in_flight.remove(raw)

        def dropped() -> None:
            if timer is not None:
                timer.cancel()
            if gate.claim():
                self.in_flight.remove(raw)

        if self.lanes.submit(planned.effect.platform, task, dropped):
            # A task that started before this finds no timer to cancel; the gate, claimed by the
            # task, makes the timer's expiry a no-op.
            timer = self.timers.after(seconds_left(run.envelope), self._expired_in_lane, run, gate)
        else:
            self.in_flight.remove(raw)
            envelope, platform = run.envelope, planned.effect.platform
            message = (f"{envelope.action} was not run: the router has {self.lanes.pending(platform)} "
                       f"commands for {platform} in hand; try again shortly")
            busy = Reply(envelope.id, Status.ERROR, message, error="busy", extra={"retry_after": 5})
            self.results.finish(raw, busy, False, run.recovering)

    def _expired_in_lane(self, run: CommandRun, gate: Once) -> None:
        if not gate.claim():
            return  # it started (its runner answers at the deadline) or was dropped
        envelope, platform = run.envelope, run.effect.platform if run.effect else ""
        message = (f"{envelope.action} was not run: its deadline passed while it waited for "
                   f"{platform} in the router's queue")
        reply = Reply(envelope.id, Status.EXPIRED, message, error="expired")
        log.warning("command %s %s: deadline passed while waiting in its lane", envelope.id, envelope.action)

        def answer() -> None:
            self.audit.command(envelope, reply, None)
            self.results.finish(run.raw, reply, False)

        try:
            contain(answer, lambda reason: self.results.set_aside(run.raw, reason, self.pipeline.skills),
                    f"command {envelope.id}")
        except REDIS_DOWN as exc:  # it stays in our list; recovery answers it (expired) later
            self.health.lost(exc)
        finally:
            self.in_flight.remove(run.raw)

    def run_approved(self, envelope: CommandEnvelope, approval: Mapping[str, Any], settle: Settle) -> bool:
        """The stored command the owner approved, run again as a run that carries its approval:
        the same path as from the queue, in its platform's lane, past its own expiry and without
        asking again; the reply also goes to its key. False (nothing run) when the lane is full."""
        raw = envelope.to_json().encode("utf-8", "replace")
        run = CommandRun(raw, envelope, self.pipeline.plan(envelope), approval=approval)

        def task() -> None:
            reply, ran = None, False
            try:
                reply = self._approved_run(run)
                ran = True
            except REDIS_DOWN as exc:  # it stays held; recovery answers from its record
                self.health.lost(exc)
            except BaseException as exc:
                reply, ran = self._approved_crashed(run, exc), True
            finally:
                settle(reply, ran)

        if run.effect is not None and not is_own_read(run.effect):
            # Dropped unstarted at shutdown: it stays held; recovery runs it.
            return self.lanes.submit(run.effect.platform, task, lambda: settle(None, False))
        task()
        return True

    def _approved_run(self, run: CommandRun) -> Reply | None:
        reply, record = self.decider.decide(run)
        if reply is not None:
            self.results.finish(run.raw, reply, record)
        return reply

    def _approved_crashed(self, run: CommandRun, exc: BaseException) -> Reply:
        why, envelope = describe(exc), run.envelope
        log.error("router error on approved command %s (%s)", envelope.id, why, exc_info=True)
        message = f"{envelope.action} was set aside after a router error ({why[:200]})"
        reply = Reply(envelope.id, Status.UNKNOWN if run.side_effect else Status.ERROR, message,
                      error="internal_error")
        contain(lambda: self.results.dead_letter(run.raw, envelope.action, f"router error: {why}", None),
                lambda reason: None, f"approved command {envelope.id}")
        return reply
