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
import time

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.audit.log import AuditUnavailable
from router.audit.recorder import AuditRecorder
from router.bounds.guard import Held
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.policy.approval_flow import APPROVAL_DECISION, ApprovalFlow
from router.policy.decisions import Ahead
from router.queue.claim_step import execute
from router.queue.command_run import DROPPED, CommandRun, ReadAhead, Verdict
from router.queue.containment import contain
from router.queue.deadline import DeadlineRunner, is_own_read
from router.queue.records import ID_REUSED, Claim, CommandRecords
from router.queue.replica_wait import ReplicaWait
from router.queue.results import Answer, ResultWriter

log = logging.getLogger("safeclaw.router.worker")


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
        self.policy = pipeline.policy
        self.runner = runner
        self.results = results
        self.conn = conn
        self.replicas = ReplicaWait(settings, conn)

    def complete(self, run: CommandRun, answers: list[Answer] | None = None) -> None:
        """Decide and answer one run, or add its answer to `answers` (written by the caller in one
        round trip). Whatever goes wrong short of Redis being unavailable, it is set aside."""
        contain(lambda: self._complete(run, answers),
                lambda reason: self.results.set_aside(run.raw, reason, self.pipeline.skills),
                f"command {run.id}")

    def _complete(self, run: CommandRun, answers: list[Answer] | None) -> None:
        reply, record = self.decide(run)
        if reply is None:
            return
        if answers is None:
            self.results.finish(run.raw, reply, record, run.recovering)
        else:
            answers.append(Answer(run.raw, reply, record, run.recovering))
        # A PING answered ok is not worth a log line (it was a third of its own cost).
        quiet = run.effect is not None and is_own_read(run.effect) and reply.status == "ok"
        log.log(logging.DEBUG if quiet else logging.INFO, "command %s %s -> %s in %.0f ms", run.id,
                run.envelope.action, reply.status, (time.monotonic() - run.started) * 1000)

    def decide(self, run: CommandRun) -> tuple[Reply | None, bool]:
        """The reply to send, and whether it completes an idempotency record; its audit line is
        written here, once (None: no reply from here, the deadline or another copy answers)."""
        envelope = run.envelope
        if envelope.action == APPROVAL_DECISION:
            reply = self.approvals.relay(envelope)
            self.audit.owner_decision(envelope, reply)
            return reply, False
        verdict = self._answer(run)
        if verdict.reply is not None:
            effect = run.effect if verdict.checked else None
            self.audit.command(envelope, verdict.reply, effect, run.approval)
        return verdict.reply, verdict.completes_record

    def _answer(self, run: CommandRun) -> Verdict:
        """The stages after the plan, in order: read ahead (one round trip), what is settled before
        the policy, the checks, the claim, the audit line of a write, the run."""
        read = self._read_ahead(run)
        settled = self._before_policy(run, read)
        if settled is not None:
            return settled
        assert isinstance(run.planned, Planned)  # an unplanned command is settled before the policy
        # The claim is taken with the counted checks (the reads' round trip, or the policy's): a
        # refusal gives it back.
        claim = read.claim or (self.records.claim_of(run.envelope) if run.side_effect else None)
        for stage in (self._check, self._claim):
            verdict = stage(run, read, claim)
            if verdict is not None:
                return verdict
        if run.planned.effect.writes:
            refused = self._audit_before(run)
            if refused is not None:  # no line, no write: answered and recorded, never run
                return Verdict(refused, run.side_effect, checked=True)
        return self._run(run)

    def _before_policy(self, run: CommandRun, read: ReadAhead) -> Verdict | None:
        """Another copy holds it; its record answers it; it expired; it was refused unplanned; an
        earlier command of its intent answers it (before the policy: the bounds would refuse it as
        a copy of itself). None: on to the checks."""
        envelope = run.envelope
        if self._a_copy(envelope, read, run.recovering or run.approved):
            self._give_back(envelope, read)
            self.results.drop(run.raw)
            return DROPPED
        if read.stored is not None:  # an id_reused refusal must not overwrite the other's record
            self._give_back(envelope, read)
            return Verdict(read.stored, read.stored.error != ID_REUSED)
        if envelope.is_expired() and not run.approved:
            self._give_back(envelope, read)
            expired = "the command expired before the router ran it; it was not run"
            return Verdict(Reply(envelope.id, Status.EXPIRED, expired, error="expired"))
        if not isinstance(run.planned, Planned):
            return Verdict(run.planned)
        if run.side_effect and envelope.intent:
            earlier = self.records.earlier_from(envelope, read.intent_first)
            if earlier is not None:
                self._give_back(envelope, read)
                return Verdict(earlier, True)
        return None

    def _check(self, run: CommandRun, read: ReadAhead, claim: Claim | None) -> Verdict | None:
        """The policy's checks (with the claim's gate when the reads did not take it), a recovered
        read that keeps failing, a repeat of its intent."""
        planned, envelope = run.planned, run.envelope
        assert isinstance(planned, Planned)
        gate = claim if claim is not None and not claim.taken else None
        ahead = Ahead(read.kill_switch, read.switch_read, gate, read.bounds, read.bounds_taken, run.approved)
        refused = self.pipeline.check(planned, self.conn, ahead)
        if refused is not None:
            self._give_back(envelope, read, claim)
            self.runner.record_outcome(planned, refused)
            return Verdict(refused, checked=True)
        if run.recovering and not run.side_effect and self.records.too_many_attempts(envelope):
            attempts = self.settings.max_attempts
            self.results.dead_letter(run.raw, envelope.action, f"still unanswered after {attempts} router "
                                     "restarts", None)
            message = (f"{envelope.action} failed {attempts} times and was set aside for the router's "
                       "operator (dead-letter list)")
            return Verdict(Reply(envelope.id, Status.ERROR, message, error="internal_error"))
        if run.side_effect and envelope.intent:
            repeat = self.records.repeat_of(envelope)
            if repeat is not None:
                return Verdict(repeat, True)
        return None

    def _claim(self, run: CommandRun, read: ReadAhead, claim: Claim | None) -> Verdict | None:
        """The claim won (another copy that holds it answers the id) and durable on the replicas
        the router needs: the one place for that wait, before anything acts."""
        if claim is None:
            return None
        claim.take()  # taken by the policy's counted checks already, unless none ran
        if not claim.won:
            log.warning("command %s is already being run elsewhere; dropping this copy", run.id)
            self.results.drop(run.raw)
            return DROPPED
        not_durable = self.replicas.claim_durable(run.envelope)
        if not_durable is not None:  # the claim is not on its replicas: not run, what it took given back
            assert isinstance(run.planned, Planned)
            self._give_back(run.envelope, read, claim)
            self.runner.record_outcome(run.planned, not_durable)  # a share the bounds kept: given back
            return Verdict(not_durable, checked=True)
        return None

    def _run(self, run: CommandRun) -> Verdict:
        assert isinstance(run.planned, Planned)
        outcome = self.runner.run(run)
        if outcome is None:  # the deadline answered first
            return DROPPED
        if outcome.dead_letter is not None:
            self.results.dead_letter(run.raw, run.envelope.action, outcome.dead_letter, None)
        self.runner.record_outcome(run.planned, outcome.reply)
        return Verdict(outcome.reply, run.side_effect, checked=True)

    def _read_ahead(self, run: CommandRun) -> ReadAhead:
        """One round trip for what comes before the run: the command's own record (a side
        effect's), the earlier command of its intent, the live kill switch (a write's), and,
        when the policy can take them ahead (`Policy.stage_bounds`), the claim's script with the
        bounds in it (the claim and the bounds, one atomic step)."""
        envelope, planned, side_effect = run.envelope, run.planned, run.side_effect
        pipe = self.conn.pipeline(transaction=False)
        if side_effect:
            self.records.queue_stored(pipe, envelope)
            if envelope.intent:
                self.records.queue_intent(pipe, envelope)
        switch = isinstance(planned, Planned) and self.policy.queue_kill_switch(pipe, planned.effect)
        reads = len(pipe)
        bounds = claim = ride = None
        if side_effect and isinstance(planned, Planned) and (run.approved or not envelope.is_expired()):
            claim = self.records.claim_of(envelope)
            gated = claim.commands()
            bounds = self.policy.stage_bounds(gated, planned.effect, envelope, self.conn)
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
            self.policy.bounds.give_back(self.conn, envelope.id, read.bounds)
        claim = claim or read.claim
        if claim is not None and claim.taken:
            self.records.unclaim(claim)

    def _audit_before(self, run: CommandRun) -> Reply | None:
        """The write's audit line, durable before it runs; the refusal when it cannot be had."""
        planned, envelope = run.planned, run.envelope
        assert isinstance(planned, Planned)
        try:
            self.audit.started(planned.effect, envelope, run.approval)
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
