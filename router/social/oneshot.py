"""The router's one pipeline run inside the caller's process, for callers with no router to queue
to: the one-shot tool (`python -m router.social`) and the MCP server without Redis.

Each command goes through the same steps as in a router: plan (validate, state the effect),
every policy check (kill switch, origin, secret_in_text, approvals, rate limits, then the hard bounds),
the run (with REDIS_URL its writes read the live kill switch again right before they leave,
`router.policy.last_moment`), the bounds' record, and the audit log (`router.social.audit_trail`):
a write's line is durable before it runs. With REDIS_URL the counters are the routers' own in
Redis; without, they are in the embedded store in the router's data folder (`router.bounds.embedded`).
Each command gets its own connection, store and policy (a policy holds what a passing command took
from the bounds until its record), so any number of processes and threads can run commands at once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.bounds.embedded import EmbeddedStore
from router.config.credentials import load_credentials
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.platforms import close_kept
from router.policy.checks import Policy
from router.policy.last_moment import kill_switch_check
from router.queue.deadline import public_environment
from router.queue.redis_io import connect
from router.redaction import Redactor
from router.registry import Skill, SkillContext, discover_skills
from router.social.audit_trail import AuditUnavailable, OneShotAudit

log = logging.getLogger("safeclaw.router.social")


class OneShotRouter:
    """Raises ConfigError (settings) at construction; `run` raises StoreError (the embedded store
    cannot be used) and Redis's connection errors, and answers everything else as a Reply."""

    def __init__(
        self, env: Mapping[str, str], redactor: Redactor, skills: Mapping[str, Skill] | None = None
    ) -> None:
        self.credentials = load_credentials(env)
        self.skills = dict(skills) if skills is not None else discover_skills()
        self.settings = RouterSettings.from_env(env, require_redis=False)
        self.redactor = redactor
        Policy(self.settings, self.skills, redactor)  # a setting naming an unknown action stops it here

    def run(self, envelope: CommandEnvelope) -> Reply:
        policy = Policy(self.settings, self.skills, self.redactor)
        pipeline = Pipeline(self.skills, policy, self.redactor, self.settings.max_attempts)
        conn = connect(self.settings) if self.settings.redis_url else None
        if conn is None:
            policy.embedded = EmbeddedStore.in_folder(self.settings.data_dir)
        try:
            return self._run(envelope, pipeline, conn)
        finally:
            close_kept()  # the platform client this one command used, and its connection
            if conn is not None:
                conn.close()
            if policy.embedded is not None:
                policy.embedded.close()

    def _run(self, envelope: CommandEnvelope, pipeline: Pipeline, conn: redis.Redis | None) -> Reply:
        audit = OneShotAudit(self.settings, self.redactor, conn)
        planned = pipeline.plan(envelope)
        if not isinstance(planned, Planned):
            audit.outcome(None, envelope, planned)
            return planned
        effect = planned.effect
        refused = pipeline.check(planned, conn)
        if refused is not None:
            audit.outcome(effect, envelope, refused)
            return refused
        if effect.writes:
            try:
                audit.started(effect, envelope)
            except AuditUnavailable as exc:  # no line, no write
                reply = Reply(envelope.id, Status.ERROR, f"{envelope.action} was not run: {exc}",
                              error="internal_error")
                pipeline.policy.record(effect, envelope, reply, conn)  # gives the bounds back
                return reply
        ctx = self.context(envelope)
        if conn is not None:  # the routers' live switch; without Redis, only the environment's (checked)
            ctx.last_moment = kill_switch_check(conn, self.settings.keys, envelope, effect)
        outcome = pipeline.run(planned, ctx)
        if outcome.dead_letter is not None:
            log.warning("%s: %s", envelope.action, outcome.dead_letter)
        pipeline.policy.record(effect, envelope, outcome.reply, conn)
        audit.outcome(effect, envelope, outcome.reply)
        return outcome.reply

    def context(self, envelope: CommandEnvelope) -> SkillContext:
        return SkillContext(
            command_id=envelope.id,
            conversation=envelope.conversation,
            credentials=self.credentials,
            env=public_environment(self.settings.env, self.credentials),
            data_dir=self.settings.data_dir,
            dry_run=self.settings.dry_run,
            log=logging.getLogger("safeclaw.router.social"),
        )
