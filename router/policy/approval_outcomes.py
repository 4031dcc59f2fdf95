"""How a held command's approval ends: approved and run (its outcome recorded), denied, expired,
or set aside when a step on it failed. Each settles the record, writes the audit line of a command
that never runs (an approved one's is its run's own), and tells the owner."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis

from protocol import approvals
from protocol.replies import Reply, Status
from router.audit.recorder import AuditRecorder, url_of
from router.config.settings import RouterSettings
from router.policy import owner_notices as notices
from router.policy.approval_store import ApprovalStore
from router.queue.dead_letter import DeadLetters
from router.queue.redis_io import REDIS_DOWN
from router.redaction import Redactor

log = logging.getLogger("safeclaw.router.control")


class ApprovalOutcomes:
    def __init__(
        self, settings: RouterSettings, store: ApprovalStore, redactor: Redactor, audit: AuditRecorder,
        conn: redis.Redis,
    ) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.store = store
        self.redactor = redactor
        self.audit = audit
        self.conn = conn
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )

    def set_aside(self, approval_id: str, reason: str) -> None:
        """Dead-letter an approval a step failed on, out of the pending index and our taken list,
        then close it as `failed` (it never runs) and tell the owner, as far as its record allows."""
        entry = {
            "reason": self.redactor.text(f"approval {approval_id}: {reason}"),
            "approval_id": approval_id,
            "router_id": self.settings.router_id,
            "ts": time.time(),
        }
        pipe = self.conn.pipeline(transaction=False)
        self.dead_letters.push(pipe, json.dumps(entry, ensure_ascii=False).encode("utf-8", "replace"))
        pipe.zrem(self.keys.approvals_pending, approval_id)
        pipe.lrem(self.store.taken, 1, approval_id)
        pipe.execute()
        try:
            record = self.store.load(approval_id)
            if record is not None and record.get("state") == approvals.PENDING:
                message = f"the router could not settle it ({reason[:200]}); it was not run"
                self.close(record, "failed", Status.ERROR, message)
        except REDIS_DOWN:
            raise
        except Exception:
            log.exception("approval %s: set aside, but its record could not be closed", approval_id)

    def ran(self, record: dict[str, Any], reply: Reply | None) -> None:
        """An approved command's run is over: its outcome recorded and told to the owner."""
        if reply is None:
            return  # another router is running it right now: that router settles it
        outcome = {
            "status": str(reply.status),
            "message": self.redactor.text(reply.message)[:300],
            "url": url_of(reply),
            "dry_run": bool((reply.result or {}).get("dry_run")),  # the owner is told it was not sent
        }
        settled = self.store.settle(record, "approved", outcome)
        self._notify(settled, "approved", outcome)

    def close(self, record: dict[str, Any], state: str, status: Status, message: str) -> None:
        """A held command that will never run: denied or expired."""
        outcome = {"status": str(status), "message": message, "url": None}
        settled = self.store.settle(record, state, outcome)
        command: dict[str, Any] = record["command"] if isinstance(record.get("command"), dict) else {}
        reply = Reply(str(command.get("id", "")), status, message, error=state)
        self.audit.closed(record, state, reply)
        self._notify(settled, state, outcome)

    def _notify(self, record: dict[str, Any], state: str, outcome: dict[str, Any]) -> None:
        effect: dict[str, Any] = record["effect"] if isinstance(record.get("effect"), dict) else {}
        notices.push(
            self.conn,
            self.keys,
            "approval_settled",
            approval_id=record["id"],
            state=state,
            conversation=record.get("conversation"),
            action=record.get("action"),
            platform=effect.get("platform"),
            text=str(record.get("text", ""))[:500],
            why=record.get("why"),
            **outcome,
        )
