"""The one command pipeline: decode -> plan (validate, effect) -> check (policy) -> run -> redact.

Both the queue worker (`router.queue.worker`) and the one-shot CLI (`python -m router.social`) send
every command through this; neither checks, runs or redacts on its own. The pipeline holds no
queue state: the worker adds the queue, idempotency records, recovery and heartbeats around it.

Outcome of a run, for a skill with a side effect: a failure known to come before the request
left (bad params, no credentials, refused login, the platform's own "no": 401/403/404/429) is
`error`; any other failure may have acted (timeout, 5xx, an unreadable answer, a crash) and is
`unknown`, never retried. A read-only skill that crashes is retried up to `max_attempts`.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from protocol import ctrl_c
from protocol.commands import CommandEnvelope, is_command_id
from protocol.replies import Reply, Status
from protocol.wire import ProtocolError
from router.errors import SkillError, describe
from router.policy.checks import Policy
from router.policy.decisions import Ahead, Decision
from router.policy.effects import Effect
from router.redaction import Redactor
from router.registry import Skill, SkillContext

log = logging.getLogger("safeclaw.router.pipeline")
# A command is asked for now: one that says it stays valid for longer than this is not one the
# agent sent (its commands live seconds), and would outlive every deadline derived from it.
MAX_COMMAND_SECONDS = 24 * 3600
# The largest queue item decoded. A command the agent sends is a few kB; the largest valid one is
# its origin's words at their caps (2 x 40 x 8,000 characters, up to 6 bytes each escaped), under 4 MB.
MAX_COMMAND_BYTES = 8 << 20
_HEAD_ID = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([A-Za-z0-9_.-]{1,128})"')

# Failures that are known to happen before anything was sent, or that the platform answered with
# a refusal: the action did not happen, so `error` (a retry is safe).
NOT_SENT_KINDS = frozenset(
    {
        "invalid_params",
        "no_credentials",
        "auth_failed",
        "not_supported",
        "unknown_platform",
        "unknown_command",
        "invalid_json",
        "empty_input",
        "rate_limited",
        "not_found",
        "kill_switch",
        "redis_unavailable",
    }
)
# The router's own "no", found while the command ran (`router.policy.last_moment`): answered as the
# policy's refusal is, `denied`, nothing sent.
REFUSED_KINDS = frozenset({"kill_switch"})


@dataclass(frozen=True)
class Planned:
    """A valid command and the effect its skill stated for it."""

    envelope: CommandEnvelope
    skill: Skill
    effect: Effect


@dataclass(frozen=True)
class Outcome:
    reply: Reply
    dead_letter: str | None = None  # why the command should also be set aside for the operator


def decode(raw: bytes | str) -> CommandEnvelope:
    """The envelope from queue bytes; ProtocolError for anything that is not one, whatever the
    decoder raised on it (bad UTF-8, a 5,000-digit number, nesting too deep), and for an item
    past MAX_COMMAND_BYTES, never decoded (a 76 MB list of numbers took 500 MB to decode)."""
    if len(raw) > MAX_COMMAND_BYTES:
        raise ProtocolError(f"invalid command: {len(raw)} bytes, more than a command's {MAX_COMMAND_BYTES}")
    try:
        return CommandEnvelope.from_json(raw)
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError(f"invalid command: {describe(exc)}") from None


class Pipeline:
    def __init__(
        self, skills: Mapping[str, Skill], policy: Policy, redactor: Redactor, max_attempts: int = 3
    ) -> None:
        self.skills = dict(skills)
        self.policy = policy
        self.redactor = redactor
        self.max_attempts = max_attempts

    def plan(self, envelope: CommandEnvelope) -> Planned | Reply:
        """Validate the command and ask its skill for the effect; a Reply when it is refused."""
        if envelope.expires_at > time.time() + MAX_COMMAND_SECONDS:
            return Reply(
                envelope.id,
                Status.DENIED,
                f"{envelope.action} was not run: its expiry is more than {MAX_COMMAND_SECONDS // 3600} h "
                "ahead; a command is valid for seconds or minutes",
                error="invalid_expiry",
            )
        skill = self.skills.get(envelope.action)
        if skill is None:
            known = ", ".join(sorted(self.skills))
            return Reply(
                envelope.id,
                Status.DENIED,
                f"unknown action {envelope.action!r}; the router knows: {known}",
                error="unknown_command",
            )
        problem = skill.validation_error(envelope.params)
        if problem is not None:
            return Reply(
                envelope.id,
                Status.DENIED,
                f"invalid params for {skill.name}: {problem}",
                error="invalid_params",
            )
        effect = _effect_of(skill, envelope)
        return Planned(envelope, skill, effect) if isinstance(effect, Effect) else effect

    def check(self, planned: Planned, conn: redis.Redis | None, ahead: Ahead | None = None) -> Reply | None:
        """The policy's refusal as a Reply, or None when the command may run."""
        decision = self.policy.decide(planned.effect, planned.envelope, conn, ahead)
        return None if decision is None else refusal(planned.envelope, decision)

    def run(self, planned: Planned, ctx: SkillContext) -> Outcome:
        skill, envelope = planned.skill, planned.envelope
        last_error = ""
        for attempt in range(1, self.max_attempts + 1):
            try:
                result = skill.run(envelope.params, ctx)
                if not isinstance(result, dict):
                    raise TypeError(f"skill {skill.name} returned {type(result).__name__}, not a dict")
                json.dumps(result)  # a value JSON cannot hold raises here, not while replying
            except SkillError as exc:
                return Outcome(self._failure(planned, exc))
            except BaseException as exc:  # whatever it raises: SystemExit, KeyboardInterrupt, ...
                if ctrl_c.leaving():  # but the program's own Ctrl-C ends it
                    raise
                log.exception(
                    "skill %s crashed on command %s (attempt %d of %d)",
                    skill.name,
                    envelope.id,
                    attempt,
                    self.max_attempts,
                )
                last_error = f"{type(exc).__name__}: {exc}"
                if skill.side_effect:  # it may have acted before it crashed: a second run could act twice
                    return _crashed_once(envelope, last_error)
                continue
            extra: dict[str, Any] = {"dry_run": True} if ctx.dry_run and skill.side_effect else {}
            others = bool(skill.others_words)  # the agent labels the result by it
            return Outcome(Reply(envelope.id, Status.OK, result=result, extra=extra, others_words=others))
        reason = f"crashed {self.max_attempts} times; last: {last_error}"
        return Outcome(
            Reply(
                envelope.id,
                Status.ERROR,
                f"{envelope.action} failed {self.max_attempts} times "
                "and was set aside for the router's operator (dead-letter list)",
                error="internal_error",
            ),
            reason,
        )

    def _failure(self, planned: Planned, exc: SkillError) -> Reply:
        envelope = planned.envelope
        extra = {"retry_after": exc.retry_after} if exc.retry_after is not None else {}
        if exc.kind in REFUSED_KINDS:
            return Reply(envelope.id, Status.DENIED, exc.message, error=exc.kind, extra=extra)
        if planned.skill.side_effect and exc.kind not in NOT_SENT_KINDS:
            # Sent, answer lost or unreadable: it may have acted; "error" would invite a repeat.
            return Reply(
                envelope.id,
                Status.UNKNOWN,
                f"{exc.message}; {envelope.action} may or may not have happened, and it will not be retried",
                error=exc.kind,
                extra=extra,
            )
        return Reply(envelope.id, Status.ERROR, exc.message, error=exc.kind, extra=extra)

    def redact(self, reply: Reply) -> dict[str, Any]:
        """The reply as it may leave the router: every string through the one redactor."""
        value: dict[str, Any] = self.redactor.value(reply.to_dict())
        return value


def _effect_of(skill: Skill, envelope: CommandEnvelope) -> Effect | Reply:
    """What the skill says it would do with the command's params, or the refusal."""
    try:
        effect = skill.effect_of(envelope.params)
        if not isinstance(effect, Effect):
            raise TypeError(f"effect() returned {type(effect).__name__}, not an Effect")
    except SkillError as exc:
        return Reply(envelope.id, Status.DENIED, exc.message, error=exc.kind)
    except BaseException as exc:  # whatever it raises: SystemExit, KeyboardInterrupt, ...
        if ctrl_c.leaving():  # but the program's own Ctrl-C ends it
            raise
        log.error("skill %s cannot state its effect: %s", skill.name, describe(exc))
        return Reply(
            envelope.id,
            Status.DENIED,
            f"{skill.name} cannot say what it would do with these params; it was not run",
            error="invalid_params",
        )
    return effect


def _crashed_once(envelope: CommandEnvelope, error: str) -> Outcome:
    message = (f"{envelope.action} crashed while running; it may or may not have happened, so it was "
               "not retried (details in the dead-letter list)")
    reply = Reply(envelope.id, Status.UNKNOWN, message, error="crashed")
    return Outcome(reply, f"crashed while running, not retried: {error}")


def refusal(envelope: CommandEnvelope, decision: Decision) -> Reply:
    extra = {"retry_after": decision.retry_after} if decision.retry_after is not None else {}
    extra.update(decision.extra)
    return Reply(envelope.id, decision.status, decision.message, error=decision.error, extra=extra)


def readable_id(raw: bytes) -> str | None:
    """The command id of a malformed command, if one can be read, so its sender gets an answer
    (of an item too large to decode, only an id it starts with)."""
    if len(raw) > MAX_COMMAND_BYTES:
        found = _HEAD_ID.match(raw[:256])
        return found.group(1).decode("ascii") if found else None
    try:
        data = json.loads(raw)
    except Exception:
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if is_command_id(value) else None
