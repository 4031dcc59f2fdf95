"""Approvals that run: the owner's side of a held command, from the hold to its one run.

- `hold` is how the policy holds a command (`Policy.approval` asks it once it knows why the command
  waits): it stores the command (`router.policy.approval_store`), tells the owner (a notice with the
  one-time code) and answers `pending_approval` with the approval id.
- Decided approvals are taken between commands (`poll`): an approved one runs once through the same
  pipeline, in its platform's lane like any command (kill switch, rate limits and every other check
  still apply; its idempotency record is the command's own), a denied or expired one never runs and
  gets its audit line (`router.policy.approval_outcomes`). Each outcome is told to the owner.
- `APPROVAL_DECISION {approval_id, decision, code}` is the owner's decision typed in a chat,
  relayed by the agent: taken only with the code the router gave the owner (`relay`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import redis

from protocol import approvals
from protocol.commands import CommandEnvelope, command_fingerprint
from protocol.hold_reasons import HoldReason, sentence
from protocol.origin import NO_ORIGIN
from protocol.replies import Reply, Status
from protocol.wire import ProtocolError
from router.audit.recorder import AuditRecorder, effect_dict
from router.config.settings import RouterSettings
from router.policy import owner_notices as notices
from router.policy.approval_outcomes import ApprovalOutcomes
from router.policy.approval_store import ApprovalsBusy, ApprovalStore, PendingCaps, decided_at
from router.policy.decisions import Decision
from router.policy.effects import Effect
from router.policy.payload_preview import preview
from router.queue.containment import contain
from router.redaction import Redactor

log = logging.getLogger("safeclaw.router.control")
APPROVAL_DECISION = "APPROVAL_DECISION"
SWEEP_SECONDS = 5.0
LOST_WAKE_UP_SECONDS = 30.0  # a decision still unsettled this long after is pushed again
# Settle: called once when an approved command's run is over, with its reply (None: another
# router runs it) and whether the run ended normally (False: it stays held, recovery settles it).
Settle = Callable[["Reply | None", bool], None]
# RunApproved: start the approved command as a run that carries its approval record (the record
# with the owner's decision); False when it cannot start now (its lane is full).
RunApproved = Callable[[CommandEnvelope, Mapping[str, Any], Settle], bool]


class ApprovalFlow:
    def __init__(
        self, settings: RouterSettings, redactor: Redactor, audit: AuditRecorder, conn: redis.Redis
    ) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.redactor = redactor
        self.audit = audit
        self.conn = conn  # the router's one pool (bytes; `approvals.text` reads what it returns)
        self.store = ApprovalStore(
            self.conn, self.keys, settings.router_id, settings.approval_ttl,
            PendingCaps(settings.max_pending_approvals, settings.max_pending_per_conversation),
        )
        self.outcomes = ApprovalOutcomes(settings, self.store, redactor, audit, conn)
        # The approvals whose commands run right now (their approval ids).
        self._running: set[str] = set()
        self._running_lock = threading.Lock()
        self._next_sweep = 0.0

    # -- the hold ---------------------------------------------------------------------------------
    def hold(self, effect: Effect, envelope: CommandEnvelope, why: HoldReason, now: float) -> Decision:
        """Hold the command for the owner, saying `why` (a run the owner approved is not asked
        again: the policy skips its hold, `Ahead.approved`)."""
        reason = sentence(why)
        text = self.redactor.text(effect.text or "")
        payload = self.redactor.value(preview(effect.kind, envelope.params))
        try:
            request = self.store.request(envelope, effect_dict(effect), text, why=why, payload=payload)
        except ApprovalsBusy as exc:
            return Decision(
                Status.ERROR, "busy", f"{envelope.action} was not run and not held: {exc}; "
                "decide the waiting ones first", retry_after=60,
            )
        if request.owner_code:
            owner_code = request.owner_code if self.settings.chat_approvals else ""
            notices.push(
                self.conn,
                self.keys,
                "approval_requested",
                approval_id=request.approval_id,
                conversation=envelope.conversation,
                action=envelope.action,
                platform=effect.platform,
                kind=effect.kind,
                text=text[:500],
                expires_at=now + self.settings.approval_ttl,
                owner_code=owner_code,
                reason=reason,
                why=why.to_dict(),
                payload=payload,
                read=list(envelope.origin.taint) if envelope.origin is not None else [NO_ORIGIN],
            )
        hours = self.settings.approval_ttl / 3600
        return Decision(
            Status.PENDING_APPROVAL,
            "approval_required",
            f"{envelope.action} ({effect.scope}) waits for the owner's approval (id {request.approval_id}): "
            f"{reason} It runs once if approved, never if denied or after {hours:g} h.",
            extra={"approval_id": request.approval_id, "reason": reason},
        )

    # -- decisions ------------------------------------------------------------------------------
    def poll(self, run: RunApproved, recovering: bool = False) -> None:
        """Act on decided approvals (and, at recovery, on those this router held when it stopped),
        then settle the expired ones."""
        held = self.store.held() if recovering else []
        for approval_id in held:
            if self._is_running(approval_id):
                continue  # held because it runs now, in a lane: its settle finishes it
            log.info("recovering decided approval %s", approval_id)
            self._contained(approval_id, partial(self._settle, approval_id, run))
        while (taken := self.store.take_decided()) is not None:
            if self._is_running(taken):  # a second push of a decision whose command runs now
                self.store.done(taken)
                continue
            self._contained(taken, partial(self._settle, taken, run))
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + SWEEP_SECONDS
            self._sweep()

    def _contained(self, approval_id: str, step: Callable[[], None]) -> None:
        """One approval's step (settle, sweep): whatever it raises short of Redis being
        unavailable, the approval is set aside with the reason and the others go on."""
        contain(step, partial(self.outcomes.set_aside, approval_id), f"approval {approval_id}")

    def _is_running(self, approval_id: str) -> bool:
        with self._running_lock:
            return approval_id in self._running

    def _settle(self, approval_id: str, run: RunApproved) -> None:
        record = self.store.load(approval_id)
        decision = self.store.decision(approval_id)
        if record is None or record.get("state") != approvals.PENDING or decision is None:
            self.store.done(approval_id)  # settled already (decided twice, or recovered): nothing runs
            return
        if decided_at(decision) > float(record["expires_at"]):
            self.outcomes.close(
                record, "expired", Status.EXPIRED, "the approval came after it expired; it was not run"
            )
        elif decision["decision"] == "deny":
            self.outcomes.close(
                record,
                "denied",
                Status.DENIED,
                f"denied by {decision.get('by', 'the owner')}; it was not run",
            )
        else:
            self._run_approved(record, decision, run)
            return  # its settle marks it done, when the run is over
        self.store.done(approval_id)

    def _run_approved(self, record: dict[str, Any], decision: dict[str, Any], run: RunApproved) -> None:
        """Start the approved command; it is settled (and done) when its run is over. Until then
        its id stays in this router's taken list, so a crash leaves it for recovery."""
        approval_id = str(record["id"])
        try:
            envelope = CommandEnvelope.from_json(json.dumps(record["command"]))
        except (ProtocolError, KeyError, TypeError):
            unreadable = "the stored command is unreadable; it was not run"
            self.outcomes.close(record, "denied", Status.ERROR, unreadable)
            self.store.done(approval_id)
            return
        with self._running_lock:
            self._running.add(approval_id)

        def release() -> None:
            with self._running_lock:
                self._running.discard(approval_id)

        def settle(reply: Reply | None, ran: bool) -> None:
            try:
                if ran:
                    self.outcomes.ran(record, reply)
                    self.store.done(approval_id)
            except redis.RedisError as exc:  # still held: recovery answers from the command's record
                log.warning("approval %s ran but is not settled yet (%s)", approval_id, type(exc).__name__)
            finally:
                release()

        if not run(envelope, {**record, "decision": decision}, settle):
            release()
            log.warning(
                "approval %s: its lane is full; it stays held and is tried again at recovery", approval_id
            )

    def _sweep(self) -> None:
        now = time.time()
        # Only what expired, and one page of the rest for decisions whose wake-up was lost: a
        # backlog of held commands costs each sweep two bounded pages, never a read of them all.
        for approval_id in dict.fromkeys([*self.store.expired_ids(now), *self.store.decided_page()]):
            self._contained(approval_id, partial(self._sweep_one, approval_id, now))

    def _sweep_one(self, approval_id: str, now: float) -> None:
        record = self.store.load(approval_id)
        decision = self.store.decision(approval_id)
        if record is None:
            self.conn.zrem(self.keys.approvals_pending, approval_id)
        elif decision is not None:
            # Decided but still pending long after: the wake-up push was lost (a Redis blip
            # between the decision and its push). Push it again; settling twice is harmless.
            if now - decided_at(decision) > LOST_WAKE_UP_SECONDS:
                self.conn.lpush(self.keys.approvals_decided, approval_id)
        elif float(record.get("expires_at", 0)) < now and self.store.claim(approval_id):
            late = "nobody approved it in time; it was not run"
            self.outcomes.close(record, "expired", Status.EXPIRED, late)

    # -- the owner's decision typed in a chat ---------------------------------------------------
    def relay(self, envelope: CommandEnvelope) -> Reply:
        """Take the owner's decision (its audit line is the caller's, as for any command)."""
        params = envelope.params
        try:
            if not self.settings.chat_approvals:
                raise approvals.ApprovalError(
                    "this router takes no approval decisions from a chat (ROUTER_CHAT_APPROVALS=false); "
                    "decide on the dashboard or with ./safeclaw approve|deny"
                )
            line = self.store.relay_owner_decision(
                str(params.get("approval_id", "")),
                str(params.get("decision", "")),
                str(params.get("code", "")),
                f"the owner ({envelope.conversation})",
            )
        except approvals.ApprovalError as exc:
            return Reply(envelope.id, Status.DENIED, str(exc), error="approval_refused")
        return Reply(envelope.id, Status.OK, line, result={"message": line})


def is_same_command(stored: Any, envelope: CommandEnvelope) -> bool:
    """True when the stored command asks for what the envelope asks for (action and params)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("params"), dict):
        return False
    return command_fingerprint(str(stored.get("action")), stored["params"]) == command_fingerprint(
        envelope.action, envelope.params
    )
