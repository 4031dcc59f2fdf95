"""The router's side of the control plane, plugged into its policy by effect.

- The live kill switch is the policy's own check (`Policy.kill_switch`): a write effect is
  denied while `Keys.kill_switch` is on, read before every command (so a flip holds for the next
  one), and always while ROUTER_KILL_SWITCH=true (a floor the owner's key cannot lift).
- The approval check stores a held command (`router.approvals`), tells the owner (a notice with
  the one-time code) and answers `pending_approval` with the approval id. Decided approvals are
  taken between commands: an approved one runs once through the same pipeline, in its platform's
  lane like any command (kill switch, rate limits and every other check still apply; its
  idempotency record is the command's own), a denied or expired one never runs. Each outcome
  is audited and told to the owner.
- A recorder appends one audit line per command (`router.audit`), redacted, and mirrors it to
  the audit stream the dashboard reads.
- `APPROVAL_DECISION {approval_id, decision, code}` is the owner's decision typed in a chat,
  relayed by the agent: taken only with the code the router gave the owner.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from protocol import CommandEnvelope, ProtocolError, Reply, Status, command_fingerprint
from protocol.blobs import suspicion
from protocol.origin import NO_ORIGIN, Origin
from router.audit import checkpoint as audit_checkpoint
from router.audit.log import AuditLog, AuditUnavailable
from router.config.settings import RouterSettings
from router.policy import approvals
from router.policy import owner_notices as notices
from router.policy.checks import Decision, Policy
from router.policy.effects import Effect
from router.policy.payload_preview import preview
from router.queue.containment import contain
from router.queue.dead_letter import DeadLetters
from router.queue.redis_io import REDIS_DOWN, client_options
from router.redaction import Redactor

log = logging.getLogger("safeclaw.router.control")
APPROVAL_DECISION = "APPROVAL_DECISION"
AUDIT_STREAM_MAX = 10_000
SWEEP_SECONDS = 5.0
LOST_WAKE_UP_SECONDS = 30.0  # a decision still unsettled this long after is pushed again
# Settle: called once when an approved command's run is over, with its reply (None: another
# router runs it) and whether the run ended normally (False: it stays held, recovery settles it).
Settle = Callable[["Reply | None", bool], None]
# RunApproved: start the approved command; False when it cannot start now (its lane is full).
RunApproved = Callable[[CommandEnvelope, Settle], bool]


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


def held_last(checks: list[Any], builtin: Any, approval: Any) -> list[Any]:
    """The checks with the approval check replaced, after the kill switch and the secret check
    (a command refused anyway is refused at once, never held nor stored with a secret in it)
    and before the counting checks (rate limits, quotas), so a held command is counted once,
    when it runs."""
    others = [check for check in checks if check != builtin]
    refused_anyway = ("kill_switch", "secret_in_text", "origin_rules")
    first = [c for c in others if getattr(c, "__name__", "") in refused_anyway]
    return [*first, approval, *[c for c in others if c not in first]]


class RouterControl:
    def __init__(self, settings: RouterSettings, policy: Policy, redactor: Redactor) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.policy = policy
        self.redactor = redactor
        self.conn = redis.Redis.from_url(
            settings.redis_url,
            decode_responses=True,
            socket_connect_timeout=3,
            socket_timeout=10,
            retry=Retry(NoBackoff(), 0),
            **client_options(settings.redis_url),
        )
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )
        self.store = approvals.ApprovalStore(
            self.conn, self.keys, settings.router_id, settings.approval_ttl,
            approvals.PendingCaps(settings.max_pending_approvals, settings.max_pending_per_conversation),
        )
        self.audit = AuditLog(
            settings.audit_dir,
            settings.router_id,
            settings.audit_max_bytes,
            key=load_audit_key(settings),
            sync_seconds=settings.audit_sync_ms / 1000,
        )
        # The approvals whose commands run right now, by command id, and their approval ids.
        self._approved: dict[str, dict[str, Any]] = {}
        self._running: set[str] = set()
        self._approved_lock = threading.Lock()
        # Ids of commands the recorder wrote a line for (a set: commands run concurrently in lanes).
        self._audited: set[str] = set()
        self._next_sweep = 0.0
        self._mirror_lines: list[str] = []  # audit lines not yet in the Redis stream
        self._mirror_lock = threading.Lock()
        policy.checks = held_last(policy.checks, policy.approval, self.approval)
        policy.add_recorder(self.record)

    def close(self) -> None:
        self.flush()
        try:
            self.audit.close()  # the last lines durable and checkpointed
        except OSError as exc:
            log.error("cannot sync the audit log %s: %s", self.audit.path, exc)
        self.conn.close()

    # -- the audit stream mirror ----------------------------------------------------------------
    # The lines ride in the router's own reply pipeline (`take_mirror` + `mirror_into`): a separate
    # XADD was a second round trip per command, a third of a PING's time.
    def take_mirror(self) -> list[str]:
        with self._mirror_lock:
            lines, self._mirror_lines = self._mirror_lines, []
        return lines

    def mirror_into(self, pipe: Any, lines: list[str]) -> None:
        for line in lines:
            pipe.xadd(self.keys.audit_stream, {"line": line}, maxlen=AUDIT_STREAM_MAX, approximate=True)

    def flush(self) -> None:
        """Mirror what no reply carried (a sweep, a relay answered elsewhere) in one round trip."""
        lines = self.take_mirror()
        if not lines:
            return
        try:
            pipe = self.conn.pipeline(transaction=False)
            self.mirror_into(pipe, lines)
            pipe.execute()
        except redis.RedisError as exc:  # the file holds them; the stream is a mirror
            log.warning("%d audit line(s) not mirrored to Redis: %s", len(lines), type(exc).__name__)

    # -- policy checks ------------------------------------------------------------------------
    def hold_reason(self, effect: Effect, envelope: CommandEnvelope) -> str | None:
        """Why this command waits for the owner, or None: its scope needs approval
        (ROUTER_REQUIRE_APPROVAL), or a text it publishes carries a decodable blob or a long
        random-looking run (a secret in an encoding no redactor lists)."""
        if effect.scope in self.policy.approval_scopes:
            return "it needs your approval"
        if not effect.writes:
            return None
        whose = self.policy.whose_words.hold_reason(effect, envelope)
        if whose is not None:
            return whose
        published = [effect.text, envelope.params.get("title")]
        for text in (t for t in published if isinstance(t, str) and t):
            why = suspicion(text)
            if why is not None:
                return f"{why}: check it is not a secret before it goes"
        return None

    def approval(
        self, effect: Effect, envelope: CommandEnvelope, conn: object, now: float
    ) -> Decision | None:
        reason = self.hold_reason(effect, envelope)
        if reason is None:
            return None
        approved = self.approved_record(envelope.id)
        if approved is not None and is_same_command(approved.get("command"), envelope):
            return None  # the owner approved this very command (not another one sent with its id)
        text = self.redactor.text(effect.text or "")
        payload = self.redactor.value(preview(effect.kind, envelope.params))
        try:
            request = self.store.request(envelope, effect_dict(effect), text, reason=reason, payload=payload)
        except approvals.ApprovalsBusy as exc:
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
                payload=payload,
                read=list(envelope.origin.taint) if envelope.origin is not None else [NO_ORIGIN],
            )
        hours = self.settings.approval_ttl / 3600
        return Decision(
            Status.PENDING_APPROVAL,
            "approval_required",
            f"{envelope.action} ({effect.scope}) waits for the owner's approval (id {request.approval_id}): "
            f"{reason}; it runs once if approved, never if denied or after {hours:g} h",
            extra={"approval_id": request.approval_id, "reason": reason},
        )

    def approved_record(self, command_id: str) -> dict[str, Any] | None:
        with self._approved_lock:
            return self._approved.get(command_id)

    # -- the audit log --------------------------------------------------------------------------
    def record(
        self, effect: Effect, envelope: CommandEnvelope, reply: Reply, conn: object, now: float
    ) -> None:
        """The policy's recorder: every planned command ends here once, refused or run."""
        decision = policy_decision(reply)
        approval_id = reply.extra.get("approval_id")
        approved = self.approved_record(envelope.id)
        if approved is not None and is_same_command(approved.get("command"), envelope):
            decision = f"approved by {approved['decision'].get('by', 'the owner')}"
            approval_id = approved["id"]
        entry = audit_entry(
            envelope.id,
            envelope.action,
            envelope.conversation,
            effect_dict(effect),
            effect.text if effect.writes else None,
            decision,
            reply,
            approval_id,
            envelope.origin,
            envelope.params if effect.writes else None,
        )
        self.append(entry)
        self._audited.add(envelope.id)

    def started(self, effect: Effect, envelope: CommandEnvelope) -> None:
        """A write's line before it runs, durable (audit before effect): raises AuditUnavailable
        when it cannot be had, and then the write must not run."""
        approved = self.approved_record(envelope.id)
        decision, approval_id = "allowed", None
        if approved is not None and is_same_command(approved.get("command"), envelope):
            decision = f"approved by {approved['decision'].get('by', 'the owner')}"
            approval_id = approved["id"]
        entry = audit_entry(envelope.id, envelope.action, envelope.conversation, effect_dict(effect),
                            effect.text, decision, Reply(envelope.id, Status.OK), approval_id,
                            envelope.origin, envelope.params)
        entry["status"] = "started"
        self.append(entry, durable=True, required=True)

    def after(self, envelope: CommandEnvelope, reply: Reply) -> None:
        """A command the policy never saw (unknown action, invalid params, expired, a repeat)."""
        if envelope.id in self._audited:
            self._audited.discard(envelope.id)
            return
        # Unplanned and ok/unknown: only a stored reply sent again (the command ran once, earlier).
        decision = "repeat" if reply.status in (Status.OK, Status.UNKNOWN) else "refused"
        if decision == "refused" and reply.error:
            decision = f"refused: {reply.error}"
        self.append(
            audit_entry(
                envelope.id, envelope.action, envelope.conversation, None, None, decision, reply, None,
                envelope.origin,
            )
        )

    def forget(self, command_id: str) -> None:
        """The command is answered without `after` (an approved run): drop its recorder mark."""
        self._audited.discard(command_id)

    def malformed(self, command_id: str | None, reason: str) -> None:
        self.append(
            {
                "command_id": command_id,
                "action": None,
                "decision": "refused: malformed",
                "status": str(Status.ERROR),
                "message": reason[:300],
            }
        )

    def append(self, entry: dict[str, Any], durable: bool = False, required: bool = False) -> None:
        """Write an audit line (and mirror it); `required`: raise AuditUnavailable when it cannot
        be written, else log it and go on (an outcome is answered even when its line is lost)."""
        entry = {"router": self.settings.router_id, **self.redactor.value(entry)}
        try:
            _record, line = self.audit.append_line(entry, durable=durable)
        except OSError as exc:
            if required:
                raise exc if isinstance(exc, AuditUnavailable) else AuditUnavailable(str(exc)) from exc
            log.error("cannot write the audit log %s: %s", self.audit.path, exc)
            return
        with self._mirror_lock:
            self._mirror_lines.append(line)

    @property
    def audit_head(self) -> dict[str, Any]:
        return {"seq": self.audit.seq, "hash": self.audit.last_hash}

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
        contain(step, partial(self._set_aside, approval_id), f"approval {approval_id}")

    def _set_aside(self, approval_id: str, reason: str) -> None:
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
                self._close(record, "failed", Status.ERROR, "the router could not settle it "
                            f"({reason[:200]}); it was not run")
        except REDIS_DOWN:
            raise
        except Exception:
            log.exception("approval %s: set aside, but its record could not be closed", approval_id)

    def _is_running(self, approval_id: str) -> bool:
        with self._approved_lock:
            return approval_id in self._running

    def _settle(self, approval_id: str, run: RunApproved) -> None:
        record = self.store.load(approval_id)
        decision = self.store.decision(approval_id)
        if record is None or record.get("state") != approvals.PENDING or decision is None:
            self.store.done(approval_id)  # settled already (decided twice, or recovered): nothing runs
            return
        if float(decision.get("ts", 0)) > float(record["expires_at"]):
            self._close(
                record, "expired", Status.EXPIRED, "the approval came after it expired; it was not run"
            )
        elif decision["decision"] == "deny":
            self._close(
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
            self._close(record, "denied", Status.ERROR, "the stored command is unreadable; it was not run")
            self.store.done(approval_id)
            return
        with self._approved_lock:
            self._approved[envelope.id] = {**record, "decision": decision}
            self._running.add(approval_id)

        def release() -> None:
            with self._approved_lock:
                self._approved.pop(envelope.id, None)
                self._running.discard(approval_id)

        def settle(reply: Reply | None, ran: bool) -> None:
            try:
                if ran:
                    self._settle_run(record, reply)
                    self.store.done(approval_id)
            except redis.RedisError as exc:  # still held: recovery answers from the command's record
                log.warning("approval %s ran but is not settled yet (%s)", approval_id, type(exc).__name__)
            finally:
                release()

        if not run(envelope, settle):
            release()
            log.warning(
                "approval %s: its lane is full; it stays held and is tried again at recovery", approval_id
            )

    def _settle_run(self, record: dict[str, Any], reply: Reply | None) -> None:
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

    def _close(self, record: dict[str, Any], state: str, status: Status, message: str) -> None:
        """A held command that will never run: denied or expired."""
        outcome = {"status": str(status), "message": message, "url": None}
        settled = self.store.settle(record, state, outcome)
        command: dict[str, Any] = record["command"] if isinstance(record.get("command"), dict) else {}
        reply = Reply(str(command.get("id", "")), status, message, error=state)
        self.append(
            audit_entry(
                str(command.get("id", "")),
                str(record.get("action")),
                str(record.get("conversation", "")),
                record.get("effect"),
                record.get("text"),
                state,
                reply,
                record.get("id"),
                stored_origin(command),
                stored_params(command),
            )
        )
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
            **outcome,
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
            if now - float(decision.get("ts", now)) > LOST_WAKE_UP_SECONDS:
                self.conn.lpush(self.keys.approvals_decided, approval_id)
        elif float(record.get("expires_at", 0)) < now and self.store.claim(approval_id):
            self._close(record, "expired", Status.EXPIRED, "nobody approved it in time; it was not run")


    # -- the owner's decision typed in a chat ---------------------------------------------------
    def relay(self, envelope: CommandEnvelope) -> Reply:
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
            reply = Reply(envelope.id, Status.DENIED, str(exc), error="approval_refused")
            decision = "refused: approval_refused"
        else:
            reply = Reply(envelope.id, Status.OK, line, result={"message": line})
            decision = f"owner decision: {params.get('decision')}"
        approval_id = (
            params.get("approval_id") if approvals.is_approval_id(params.get("approval_id")) else None
        )
        self.append(
            audit_entry(
                envelope.id, envelope.action, envelope.conversation, None, None, decision, reply, approval_id
            )
        )
        self._audited.add(envelope.id)
        return reply


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


def stored_origin(command: dict[str, Any]) -> Origin | None:
    """The origin a held command was sent with (None when it had none, or it is unreadable)."""
    try:
        return Origin.from_dict(command["origin"]) if command.get("origin") is not None else None
    except ValueError:
        return None


def stored_params(command: dict[str, Any]) -> dict[str, Any] | None:
    params = command.get("params")
    return params if isinstance(params, dict) else None


def policy_decision(reply: Reply) -> str:
    """The audit's `decision` for a command the policy saw: allowed, pending_approval or denied: KIND."""
    if reply.status in (Status.DENIED, Status.PENDING_APPROVAL) and reply.error:
        return "pending_approval" if reply.status == Status.PENDING_APPROVAL else f"denied: {reply.error}"
    return "allowed"


def is_same_command(stored: Any, envelope: CommandEnvelope) -> bool:
    """True when the stored command asks for what the envelope asks for (action and params)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("params"), dict):
        return False
    return command_fingerprint(str(stored.get("action")), stored["params"]) == command_fingerprint(
        envelope.action, envelope.params
    )
