"""The router's one writer of audit lines: one line per command answered, per malformed item and per
held command closed without running, redacted, appended to the chained log (`router.audit.log`) and
mirrored to the Redis audit stream the dashboard reads.

A command's line is written where its answer is decided (`router.queue.triage`, or the deadline
when a run outlives it), once: with the effect the policy checked, or without one when the command
was answered before the policy (a repeat, an expired or invalid command).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import redis

from protocol import approvals
from protocol.commands import CommandEnvelope
from protocol.origin import Origin
from protocol.replies import Reply, Status
from router.audit import checkpoint as audit_checkpoint
from router.audit.log import AuditLog, AuditUnavailable
from router.config.settings import RouterSettings
from router.policy.effects import Effect
from router.redaction import Redactor

log = logging.getLogger("safeclaw.router.audit")
AUDIT_STREAM_MAX = 10_000


def origin_of(conversation: str, origin: Origin | None = None) -> dict[str, Any]:
    """Who asked, for the audit log: the conversation and, when the agent sent it, the origin
    (owner, stranger or autonomy, by which path) and the outside text the turn had read."""
    shown: dict[str, Any] = {"channel": conversation.split(":", 1)[0], "conversation": conversation}
    if origin is None:
        shown["kind"] = "unknown"
        return shown
    return {**shown, **origin.summary()}


def effect_dict(effect: Effect) -> dict[str, Any]:
    return {"platform": effect.platform, "kind": effect.kind, "target": effect.target}


def url_of(reply: Reply) -> str | None:
    result = reply.result or {}
    url = result.get("url")
    return url if isinstance(url, str) else None


def load_audit_key(settings: RouterSettings) -> bytes | None:
    """The key sealing the audit checkpoints, made at the first start; None (logged) when it cannot
    be read or made: the log is still written, its end is then vouched for by Redis only."""
    try:
        return audit_checkpoint.load_key(settings.audit_key_file, create=True)
    except audit_checkpoint.AuditKeyError as exc:
        log.error("%s; audit checkpoints are off", exc)
        return None


def audit_entry(
    command_id: str,
    action: str,
    conversation: str,
    effect: dict[str, Any] | None,
    text: str | None,
    decision: str,
    reply: Reply,
    approval_id: Any,
    origin: Origin | None = None,
    payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One command's line in the audit log (the one-shot tool writes the same); `payload`: every
    field a write sends its platform, not only the text."""
    entry: dict[str, Any] = {
        "command_id": command_id,
        "action": action,
        "origin": origin_of(conversation, origin),
        "effect": effect,
        "decision": decision,
        "status": str(reply.status),
        "url": url_of(reply),
    }
    if text is not None:
        entry["text"] = text
    if payload is not None:
        entry["payload"] = payload
    if reply.error:
        entry["error"] = reply.error
    if approval_id:
        entry["approval_id"] = approval_id
    if reply.extra.get("dry_run"):
        entry["dry_run"] = True
    return entry


def stored_origin(command: Mapping[str, Any]) -> Origin | None:
    """The origin a held command was sent with (None when it had none, or it is unreadable)."""
    try:
        return Origin.from_dict(command["origin"]) if command.get("origin") is not None else None
    except ValueError:
        return None


def stored_params(command: Mapping[str, Any]) -> dict[str, Any] | None:
    params = command.get("params")
    return params if isinstance(params, dict) else None


def policy_decision(reply: Reply) -> str:
    """The audit's `decision` for a command the policy saw: allowed, pending_approval or denied: KIND."""
    if reply.status in (Status.DENIED, Status.PENDING_APPROVAL) and reply.error:
        return "pending_approval" if reply.status == Status.PENDING_APPROVAL else f"denied: {reply.error}"
    return "allowed"


def checked_decision(reply: Reply, approval: Mapping[str, Any] | None) -> str:
    """What the policy made of a command it checked, or the owner's approval it ran under."""
    if approval is not None:
        return f"approved by {approval['decision'].get('by', 'the owner')}"
    return policy_decision(reply)


def unchecked_decision(reply: Reply) -> str:
    """A command answered before the policy: a stored reply sent again (it ran once, earlier), or a
    refusal (unknown action, invalid params, expired)."""
    if reply.status in (Status.OK, Status.UNKNOWN):
        return "repeat"
    return f"refused: {reply.error}" if reply.error else "refused"


class AuditRecorder:
    def __init__(self, settings: RouterSettings, redactor: Redactor) -> None:
        self.router_id = settings.router_id
        self.stream = settings.keys.audit_stream
        self.redactor = redactor
        self.log = AuditLog(
            settings.audit_dir,
            settings.router_id,
            settings.audit_max_bytes,
            key=load_audit_key(settings),
            sync_seconds=settings.audit_sync_ms / 1000,
        )
        self._mirror_lines: list[str] = []  # audit lines not yet in the Redis stream
        self._mirror_lock = threading.Lock()

    def close(self) -> None:
        try:
            self.log.close()  # the last lines durable and checkpointed
        except OSError as exc:
            log.error("cannot sync the audit log %s: %s", self.log.path, exc)

    @property
    def head(self) -> dict[str, Any]:
        return {"seq": self.log.seq, "hash": self.log.last_hash}

    # -- the lines ------------------------------------------------------------------------------
    def command(
        self,
        envelope: CommandEnvelope,
        reply: Reply,
        checked: Effect | None,
        approval: Mapping[str, Any] | None = None,
    ) -> None:
        """A command's answer. `checked`: the effect the policy decided on (None: answered before
        the policy); `approval`: the owner's approval this very command runs under."""
        if checked is None:
            self.append(audit_entry(envelope.id, envelope.action, envelope.conversation, None, None,
                                    unchecked_decision(reply), reply, None, envelope.origin))
            return
        approval_id = approval["id"] if approval is not None else reply.extra.get("approval_id")
        writes = checked.writes
        self.append(audit_entry(envelope.id, envelope.action, envelope.conversation, effect_dict(checked),
                                checked.text if writes else None, checked_decision(reply, approval), reply,
                                approval_id, envelope.origin, envelope.params if writes else None))

    def started(
        self, effect: Effect, envelope: CommandEnvelope, approval: Mapping[str, Any] | None = None
    ) -> None:
        """A write's line before it runs, durable (audit before effect): raises AuditUnavailable
        when it cannot be had, and then the write must not run."""
        decision = checked_decision(Reply(envelope.id, Status.OK), approval)
        approval_id = approval["id"] if approval is not None else None
        ok = Reply(envelope.id, Status.OK)
        entry = audit_entry(envelope.id, envelope.action, envelope.conversation, effect_dict(effect),
                            effect.text, decision, ok, approval_id, envelope.origin, envelope.params)
        entry["status"] = "started"
        self.append(entry, durable=True, required=True)

    def owner_decision(self, envelope: CommandEnvelope, reply: Reply) -> None:
        """The owner's approval decision relayed from a chat, taken or refused."""
        named = envelope.params.get("approval_id")
        approval_id = named if approvals.is_approval_id(named) else None
        if reply.status == Status.OK:
            decision = f"owner decision: {envelope.params.get('decision')}"
        else:
            decision = f"refused: {reply.error}"
        self.append(audit_entry(envelope.id, envelope.action, envelope.conversation, None, None, decision,
                               reply, approval_id))

    def closed(self, record: Mapping[str, Any], state: str, reply: Reply) -> None:
        """A held command that will never run (denied, expired, failed), from its approval record."""
        command = record["command"] if isinstance(record.get("command"), dict) else {}
        origin, params = stored_origin(command), stored_params(command)
        self.append(audit_entry(str(command.get("id", "")), str(record.get("action")),
                                str(record.get("conversation", "")), record.get("effect"), record.get("text"),
                                state, reply, record.get("id"), origin, params))

    def malformed(self, command_id: str | None, reason: str) -> None:
        self.append({"command_id": command_id, "action": None, "decision": "refused: malformed",
                     "status": str(Status.ERROR), "message": reason[:300]})

    def append(self, entry: dict[str, Any], durable: bool = False, required: bool = False) -> None:
        """Write an audit line (and mirror it); `required`: raise AuditUnavailable when it cannot
        be written, else log it and go on (an outcome is answered even when its line is lost)."""
        entry = {"router": self.router_id, **self.redactor.value(entry)}
        try:
            _record, line = self.log.append_line(entry, durable=durable)
        except OSError as exc:
            if required:
                raise exc if isinstance(exc, AuditUnavailable) else AuditUnavailable(str(exc)) from exc
            log.error("cannot write the audit log %s: %s", self.log.path, exc)
            return
        with self._mirror_lock:
            self._mirror_lines.append(line)

    # -- the audit stream mirror ----------------------------------------------------------------
    # The lines ride in the router's own reply pipeline (`take_mirror` + `mirror_into`): a separate
    # XADD was a second round trip per command, a third of a PING's time.
    def take_mirror(self) -> list[str]:
        with self._mirror_lock:
            lines, self._mirror_lines = self._mirror_lines, []
        return lines

    def mirror_into(self, pipe: Any, lines: list[str]) -> None:
        for line in lines:
            pipe.xadd(self.stream, {"line": line}, maxlen=AUDIT_STREAM_MAX, approximate=True)

    def flush(self, conn: redis.Redis) -> None:
        """Mirror what no reply carried (a sweep, a relay answered elsewhere) in one round trip."""
        lines = self.take_mirror()
        if not lines:
            return
        try:
            pipe = conn.pipeline(transaction=False)
            self.mirror_into(pipe, lines)
            pipe.execute()
        except redis.RedisError as exc:  # the file holds them; the stream is a mirror
            log.warning("%d audit line(s) not mirrored to Redis: %s", len(lines), type(exc).__name__)
