"""What answer a command gets, short of its queue: its own stored record, `expired`, a refusal,
the first answer of its intent, or a run.

The order is the at-most-once guarantee: a side-effecting command with a record is answered
from it (done: its reply again; started, not done: `unknown`) before anything else; an
expired one is never run; a repeat of an intent is answered before policy (the bounds would
refuse it as a copy of itself); a side effect runs only after its `started` record is claimed
(SET NX), so two copies of one command never both run.

Copies: the claim and the bounds' shares are one atomic step (`router.queue.claim_step`), so only
the copy that wins the claim takes a share; a copy that loses it, or finds the command started and
not done (in flight elsewhere), takes nothing and is dropped: the copy holding the claim answers the
id (a copy after it is done gets the stored reply). Only a recovery, or an approved command run
again, answers a started record itself (`unknown`): its run may have been cut short.

Round trips (issue 28: fused where `bench/router_post.py` and `tests/router/queue/test_post_round_trips.py`
show it matters, a post being the router's hot write): the record, the intent and the kill switch
are read in one pipeline with the claim's script, which also takes the bounds when no check between
could hold the command (`_read_ahead`); otherwise the script goes with the rate limits and bounds in
the policy's own round trip. A claim the bounds refuse is given back (DEL), so a refused command is
checked again when it is sent again, as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.audit.log import AuditUnavailable
from router.audit.recorder import AuditRecorder
from router.bounds import Denial
from router.bounds.guard import Held
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.policy.approval_flow import APPROVAL_DECISION, ApprovalFlow
from router.policy.decisions import Ahead
from router.queue.claim_step import execute
from router.queue.deadline import DeadlineRunner
from router.queue.records import ID_REUSED, Claim, CommandRecords
from router.queue.replica_wait import ReplicaWait
from router.queue.results import ResultWriter

log = logging.getLogger("safeclaw.router.worker")


@dataclass
class ReadAhead:
    """The reads of `Decider._read_ahead`: a stored answer, an earlier intent's answer, the switch."""

    kill_switch: bytes | None = None
    switch_read: bool = False
    stored: Reply | None = None
    intent_first: bytes | None = None  # the id holding the command's intent, if any
    bounds: Held | Denial | None = None  # taken ahead (`Policy.stage_bounds`), with the claim
    bounds_taken: bool = False
    claim: Claim | None = None
    in_flight: bool = False  # the command's record says started, not done


class Decider:
    def __init__(
        self,
        settings: RouterSettings,
        records: CommandRecords,
        approvals: ApprovalFlow,
        audit: AuditRecorder,
        pipeline: Pipeline,
        runner: DeadlineRunner,
        results: ResultWriter,
        conn: redis.Redis,
    ) -> None:
        self.settings = settings
        self.records = records
        self.approvals = approvals
        self.audit = audit
        self.pipeline = pipeline
        self.runner = runner
        self.results = results
        self.conn = conn
        self.replicas = ReplicaWait(settings, conn)

    def decide(
        self,
        envelope: CommandEnvelope,
        planned: Planned | Reply,
        raw: bytes,
        recovering: bool,
        approved: bool = False,
        taken_at: float | None = None,
    ) -> tuple[Reply | None, bool]:
        """The reply to send, and whether it completes an idempotency record; its audit line is
        written here, once (None: no reply from here, the deadline or another copy answers)."""
        if envelope.action == APPROVAL_DECISION:
            reply = self.approvals.relay(envelope)
            self.audit.owner_decision(envelope, reply)
            return reply, False
        answer, record, checked = self._answer(envelope, planned, raw, recovering, approved, taken_at)
        if answer is not None:
            effect = planned.effect if checked and isinstance(planned, Planned) else None
            self.audit.command(envelope, answer, effect, self.approvals.approval_of(envelope))
        return answer, record

    def _answer(
        self,
        envelope: CommandEnvelope,
        planned: Planned | Reply,
        raw: bytes,
        recovering: bool,
        approved: bool,
        taken_at: float | None,
    ) -> tuple[Reply | None, bool, bool]:
        """The reply, whether it completes a record, and whether the policy checked the command."""
        side_effect = isinstance(planned, Planned) and planned.skill.side_effect
        read = self._read_ahead(envelope, planned, side_effect, approved)
        if self._a_copy(envelope, read, recovering or approved):
            self._give_back(envelope, read)
            self.results.drop(raw)
            return None, False, False
        if read.stored is not None:  # an id_reused refusal must not overwrite the other's record
            self._give_back(envelope, read)
            return read.stored, read.stored.error != ID_REUSED, False
        if envelope.is_expired() and not approved:
            self._give_back(envelope, read)
            return Reply(
                envelope.id,
                Status.EXPIRED,
                "the command expired before the router ran it; it was not run",
                error="expired",
            ), False, False
        if not isinstance(planned, Planned):
            return planned, False, False
        if side_effect and envelope.intent:
            earlier = self.records.earlier_from(envelope, read.intent_first)
            if earlier is not None:  # before policy: the bounds would refuse it as a copy of itself
                self._give_back(envelope, read)
                return earlier, True, False
        # The claim is taken with the counted checks (the reads' round trip, or the policy's): a
        # refusal gives it back.
        claim = read.claim or (self.records.claim_of(envelope) if side_effect else None)
        gate = claim if claim is not None and not claim.taken else None
        ahead = Ahead(read.kill_switch, read.switch_read, gate, read.bounds, read.bounds_taken)
        refused = self.pipeline.check(planned, self.conn, ahead)
        if refused is not None:
            self._give_back(envelope, read, claim)
            self.runner.record_outcome(planned, refused)
            return refused, False, True
        if recovering and not side_effect and self.records.too_many_attempts(envelope):
            reason = f"still unanswered after {self.settings.max_attempts} router restarts"
            self.results.dead_letter(raw, envelope.action, reason, None)
            return Reply(
                envelope.id,
                Status.ERROR,
                f"{envelope.action} failed {self.settings.max_attempts} "
                "times and was set aside for the router's operator (dead-letter list)",
                error="internal_error",
            ), False, False
        if side_effect and envelope.intent:
            repeat = self.records.repeat_of(envelope)
            if repeat is not None:
                return repeat, True, False
        if claim is not None:
            claim.take()  # taken by the policy's counted checks already, unless none ran
        if claim is not None and not claim.won:
            log.warning("command %s is already being run elsewhere; dropping this copy", envelope.id)
            self.results.drop(raw)
            return None, False, False
        # Here the claim is won (or none is needed) and nothing has acted yet: the one place for a
        # wait that makes the claim durable before the effect (replicas, WAIT).
        not_durable = self.replicas.claim_durable(envelope) if claim is not None else None
        if not_durable is not None:  # the claim is not on its replicas: not run, what it took given back
            self._give_back(envelope, read, claim)
            self.runner.record_outcome(planned, not_durable)  # a share the bounds kept: given back
            return not_durable, False, True
        if planned.effect.writes:
            refused = self._audit_before(planned)
            if refused is not None:  # no line, no write: answered and recorded, never run
                return refused, side_effect, True
        outcome = self.runner.run(raw, planned, approved, taken_at)
        if outcome is None:  # the deadline answered first
            return None, False, False
        if outcome.dead_letter is not None:
            self.results.dead_letter(raw, envelope.action, outcome.dead_letter, None)
        self.runner.record_outcome(planned, outcome.reply)
        return outcome.reply, side_effect, True

    def _read_ahead(
        self, envelope: CommandEnvelope, planned: Planned | Reply, side_effect: bool, approved: bool
    ) -> ReadAhead:
        """One round trip for what comes before the run: the command's own record (a side
        effect's), the earlier command of its intent, the live kill switch (a write's), and,
        when the policy can take them ahead (`Policy.stage_bounds`), the claim's script with the
        bounds in it (the claim and the bounds, one atomic step)."""
        pipe = self.conn.pipeline(transaction=False)
        if side_effect:
            self.records.queue_stored(pipe, envelope)
            if envelope.intent:
                self.records.queue_intent(pipe, envelope)
        switch = isinstance(planned, Planned) and self.pipeline.policy.queue_kill_switch(pipe, planned.effect)
        reads = len(pipe)
        bounds = claim = ride = None
        if side_effect and isinstance(planned, Planned) and (approved or not envelope.is_expired()):
            claim = self.records.claim_of(envelope)
            gated = claim.commands()
            bounds = self.pipeline.policy.stage_bounds(gated, planned.effect, envelope, self.conn)
            ride = claim.stage(pipe, gated) if bounds is not None else None
        answers = execute(pipe) if len(pipe) else []
        read = ReadAhead(kill_switch=answers[reads - 1] if switch else None, switch_read=switch)
        if side_effect:
            read.stored = self.records.stored_from(envelope, answers[0], answers[1])
            read.in_flight = self.records.in_flight(answers[0])
            read.intent_first = answers[2] if envelope.intent else None
        if bounds is not None and claim is not None and ride is not None:
            taken = ride.settle(self.conn, answers[reads:])
            claim.taken, read.claim, read.bounds_taken = True, claim, True
            if isinstance(taken, list):  # won: the bounds' answers; lost: nothing was taken
                read.bounds = bounds.settle(self.conn, taken)
        return read

    def _a_copy(self, envelope: CommandEnvelope, read: ReadAhead, answers_a_start: bool) -> bool:
        """Another copy holds the command: it lost the claim just now, or the command's record says
        started and not done (in flight elsewhere). That copy answers the id; this one takes
        nothing. `answers_a_start`: a recovery or an approved run answers a started record itself."""
        if read.stored is not None and (read.stored.error == ID_REUSED or not read.in_flight):
            return False  # another command's id (refused as such), or done (its stored reply again)
        lost = read.stored is None and read.claim is not None and not read.claim.won
        if lost or (read.in_flight and not answers_a_start):
            log.warning("command %s is already being run elsewhere; dropping this copy", envelope.id)
            return True
        return False

    def _give_back(self, envelope: CommandEnvelope, read: ReadAhead, claim: Claim | None = None) -> None:
        """What the reads' round trip (or the policy's) took for a command that will not run: the
        bounds' shares, the claim."""
        if isinstance(read.bounds, Held):
            self.pipeline.policy.bounds.give_back(self.conn, envelope.id, read.bounds)
        claim = claim or read.claim
        if claim is not None and claim.taken:
            self.records.unclaim(claim)

    def _audit_before(self, planned: Planned) -> Reply | None:
        """The write's audit line, durable before it runs; the refusal when it cannot be had."""
        envelope = planned.envelope
        try:
            self.audit.started(planned.effect, envelope, self.approvals.approval_of(envelope))
        except AuditUnavailable as exc:
            log.error("command %s %s not run: %s", envelope.id, envelope.action, exc)
            refused = Reply(
                envelope.id,
                Status.ERROR,
                f"{envelope.action} was not run: its audit line could not be written "
                f"({exc.strerror or exc}); try again once the router's audit folder can be written",
                error="audit_unavailable",
            )
            self.runner.record_outcome(planned, refused)  # gives back what the bounds counted for it
            return refused
        return None
