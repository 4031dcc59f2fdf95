"""The one-shot tool's lines in the router's audit log.

Every one-shot process appends to one chain, `oneshot`, in the router's audit folder
(ROUTER_AUDIT_DIR), with the records a router writes (`router.audit.recorder.audit_entry`), its
checkpoints sealed by the same key, checked by the same `python -m router.audit verify`. The
processes take turns: an exclusive lock on `oneshot.lock` is held from reading the chain's head
to the fsync of the line, so two of them never write the same seq. Audit before effect: a
write's `started` line is durable before the write runs (no line, no write), and every
command's outcome line before its answer is printed. With REDIS_URL the lines are also added to
the audit stream the dashboard reads.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from protocol.commands import CommandEnvelope
from protocol.replies import Reply, Status
from router.audit import checkpoint as audit_checkpoint
from router.audit.log import AuditLog
from router.audit.recorder import AUDIT_STREAM_MAX, audit_entry, effect_dict, policy_decision
from router.config.settings import RouterSettings
from router.policy.effects import Effect
from router.redaction import Redactor

CHAIN = "oneshot"
log = logging.getLogger("safeclaw.router.social")


class AuditUnavailable(Exception):
    """The audit line could not be written (a full disk, a bad key file): the write must not run."""


class OneShotAudit:
    def __init__(self, settings: RouterSettings, redactor: Redactor, conn: redis.Redis | None = None) -> None:
        self.settings = settings
        self.redactor = redactor
        self.conn = conn

    def started(self, effect: Effect, envelope: CommandEnvelope) -> None:
        """The durable line a write needs before it runs; AuditUnavailable when it cannot be had."""
        reply = Reply(envelope.id, Status.OK, "started")
        entry = self._entry(effect, envelope, "allowed", reply)
        entry["status"] = "started"
        self.append(entry)

    def outcome(self, effect: Effect | None, envelope: CommandEnvelope, reply: Reply) -> None:
        """How the command ended: `effect` None when the policy never saw it (bad params)."""
        if effect is None:
            decision = f"refused: {reply.error}" if reply.error else "refused"
        else:
            decision = policy_decision(reply)
        self.quietly(self._entry(effect, envelope, decision, reply))

    def quietly(self, entry: dict[str, Any]) -> None:
        """An outcome line: the answer is given even when the line cannot be written (logged)."""
        try:
            self.append(entry)
        except AuditUnavailable as exc:
            log.error("%s", exc)

    def _entry(
        self, effect: Effect | None, envelope: CommandEnvelope, decision: str, reply: Reply
    ) -> dict[str, Any]:
        text = effect.text if effect is not None and effect.writes else None
        described = effect_dict(effect) if effect is not None else None
        entry = audit_entry(envelope.id, envelope.action, envelope.conversation, described, text, decision,
                            reply, reply.extra.get("approval_id"), envelope.origin,
                            envelope.params if effect is not None and effect.writes else None)
        if reply.extra.get("reason"):
            entry["reason"] = reply.extra["reason"]
        return entry

    def append(self, entry: dict[str, Any]) -> None:
        entry = {"router": CHAIN, **self.redactor.value(entry)}
        directory = self.settings.audit_dir
        try:
            with _turn(directory / f"{CHAIN}.lock"):
                key = audit_checkpoint.load_key(self.settings.audit_key_file, create=True)
                audit = AuditLog(directory, CHAIN, self.settings.audit_max_bytes, key=key, sync_seconds=None)
                try:
                    _record, line = audit.append_line(entry, durable=True)
                finally:
                    audit.close()
        except (OSError, audit_checkpoint.AuditKeyError) as exc:
            raise AuditUnavailable(f"the audit log in {directory} cannot be written: {exc}") from None
        if self.conn is not None:
            try:
                self.conn.xadd(self.settings.keys.audit_stream, {"line": line}, maxlen=AUDIT_STREAM_MAX,
                               approximate=True)
            except redis.RedisError as exc:  # the file holds it; the stream is a mirror
                log.warning("audit line not mirrored to Redis: %s", type(exc).__name__)


@contextmanager
def _turn(lock_path: os.PathLike[str]) -> Iterator[None]:
    """Exclusive use of the chain among the one-shot processes on this machine."""
    os.makedirs(os.path.dirname(lock_path), mode=0o700, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
