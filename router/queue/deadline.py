"""Running a skill within its command's deadline.

One total deadline per command, from its expiry: no platform call outlives it. Its writes ask the
live kill switch again right before they leave (`router.policy.last_moment`). A command still
running at its deadline is answered then (`unknown` for a side effect: it may yet happen) and
the run's own answer is dropped when it comes; `Once` makes sure only one of the two answers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.audit.recorder import AuditRecorder
from router.config.credentials import secret_values
from router.config.settings import RouterSettings
from router.pipeline import Outcome, Pipeline, Planned
from router.policy.checks import Policy
from router.policy.effects import LOCAL_PLATFORM, Effect
from router.policy.last_moment import kill_switch_check
from router.queue import hangup
from router.queue.command_run import CommandRun
from router.queue.lanes import Once
from router.queue.results import ResultWriter
from router.queue.timers import Timers
from router.registry import SkillContext

log = logging.getLogger("safeclaw.router.worker")
PLATFORM_TIMEOUT_SECONDS = 20.0  # one platform request at most, and never past the command's deadline
ANSWER_MARGIN_SECONDS = 0.25  # answer this long before the expiry, while the agent still waits


class DeadlineRunner:
    def __init__(
        self,
        settings: RouterSettings,
        credentials: Mapping[str, str],
        pipeline: Pipeline,
        policy: Policy,
        audit: AuditRecorder,
        results: ResultWriter,
        conn: redis.Redis,
        timers: Timers,
    ) -> None:
        self.timers = timers
        self.settings = settings
        self.credentials = credentials
        self.pipeline = pipeline
        self.policy = policy
        self.audit = audit
        self.results = results
        self.conn = conn
        self.environment = {**public_environment(settings.env, credentials), "ROUTER_ID": settings.router_id}

    def run(self, run: CommandRun) -> Outcome | None:
        """Run the skill; if it is still running at the command's deadline, answer then (`unknown`
        for a side effect: it may yet happen), hang up its connections and drop the run's own
        answer when it comes. An approved command's own expiry has passed by design: it gets one
        platform timeout from when it was taken."""
        planned, envelope = run.planned, run.envelope
        assert isinstance(planned, Planned)
        left = seconds_left(envelope, run.approved, run.taken_at)
        ctx = self.context(envelope, timeout=min(PLATFORM_TIMEOUT_SECONDS, left), approved=run.approved)
        ctx.last_moment = kill_switch_check(self.conn, self.settings.keys, envelope, planned.effect)
        if is_own_read(planned.effect):
            return self.pipeline.run(planned, ctx)
        once = Once()
        with hangup.tracked() as command:
            queued = max(0.0, time.time() - run.taken_at)
            args = (run, once, command, queued, left)
            timer = self.timers.after(left, self._deadline_passed, *args)
            try:
                outcome = self.pipeline.run(planned, ctx)
            finally:
                timer.cancel()
        if not once.claim():
            log.warning(
                "command %s %s finished after its deadline (%s); its answer was already sent",
                envelope.id,
                envelope.action,
                outcome.reply.status,
            )
            return None
        return outcome

    def _deadline_passed(
        self, run: CommandRun, once: Once, command: hangup.Command, queued: float, at_platform: float
    ) -> None:
        if not once.claim():
            return
        planned = run.planned
        assert isinstance(planned, Planned)
        hangup.hang_up(command)  # the lane's thread returns now, whatever its platform does
        envelope, side_effect = planned.envelope, planned.skill.side_effect
        # Most of its time spent waiting in our own lane: not the platform's failure (the circuit
        # breaker does not count it), though it may still have happened.
        error = "queue_deadline" if queued > at_platform else "request_failed"
        if side_effect:
            reply = Reply(
                envelope.id,
                Status.UNKNOWN,
                f"{planned.effect.platform} did not answer before the "
                f"command's deadline; {envelope.action} may or may not have happened, and it will "
                "not be retried",
                error=error,
            )
        else:
            reply = Reply(
                envelope.id,
                Status.ERROR,
                f"{planned.effect.platform} did not answer before the command's deadline",
                error=error,
            )
        log.warning("command %s %s: deadline passed while running", envelope.id, envelope.action)
        try:
            self.record_outcome(planned, reply)
            self.audit.command(envelope, reply, planned.effect, run.approval)
            self.results.finish(run.raw, reply, side_effect)
        except Exception:
            log.exception("could not answer command %s at its deadline", envelope.id)

    def record_outcome(self, planned: Planned, reply: Reply) -> None:
        self.policy.record(planned.effect, planned.envelope, reply, self.conn)

    def context(
        self, envelope: CommandEnvelope, timeout: float = PLATFORM_TIMEOUT_SECONDS, approved: bool = False
    ) -> SkillContext:
        return SkillContext(
            timeout=timeout,
            command_id=envelope.id,
            conversation=envelope.conversation,
            credentials=self.credentials,
            env=dict(self.environment),
            data_dir=self.settings.data_dir,
            dry_run=self.settings.dry_run,
            approved=approved,
            log=logging.getLogger(f"safeclaw.router.skill.{envelope.action}"),
        )


def seconds_left(envelope: CommandEnvelope, approved: bool = False, taken_at: float | None = None) -> float:
    """Until the command is answered at the latest: its expiry (an approved one: one platform
    timeout from when it was taken), less the margin that lets the agent still read the answer."""
    deadline = (taken_at or time.time()) + PLATFORM_TIMEOUT_SECONDS if approved else envelope.expires_at
    return max(0.05, deadline - time.time() - ANSWER_MARGIN_SECONDS)


def is_own_read(effect: Effect) -> bool:
    """A read of the router itself (PING): answered in the loop, it touches nothing outside."""
    return effect.platform == LOCAL_PLATFORM and not effect.writes


def public_environment(env: Mapping[str, str], credentials: Mapping[str, str]) -> dict[str, str]:
    """The environment a skill sees as settings: no credential, no secret-named variable, no REDIS_URL."""
    secrets = set(secret_values(env, credentials))
    return {k: v for k, v in env.items() if k != "REDIS_URL" and k not in credentials and v not in secrets}
