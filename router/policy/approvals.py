"""Approvals that work: a command policy holds back waits in Redis for the owner's decision.

The router stores the command (`Keys.approval(id)`: id, the command, its effect and text,
requested_at, expires_at, state) and indexes it in `Keys.approvals_pending` by expiry. The owner
decides with the `control` user (dashboard, `./safeclaw approve|deny`): `decide()` writes
`Keys.approval_decision(id)` with SET NX, so the first decision wins, and pushes the id on
`Keys.approvals_decided`. A router moves the id into its own list (recovered after a crash),
and runs an approved command under the command's own idempotency record: approved twice, or
approved and the router restarted in between, it still runs once. A denied or expired one never
runs. The control user cannot write a record, so it cannot make the router run anything new.

In a chat the owner's decision travels as an `APPROVAL_DECISION` command through the agent,
which may not decide itself: the command must carry the one-time code the router handed the
owner with the request (in an owner notice, which the agent's channel delivers without the
model seeing it). Only its sha256 is stored here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis

from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from protocol.origin import NO_ORIGIN

DECISIONS = ("approve", "deny")
PENDING = "pending"
SWEEP_PAGE = 200  # approvals one sweep reads at most, each way (expired; a look for lost wake-ups)
SETTLED_KEEP_SECONDS = 7 * 24 * 3600  # a decided record stays readable this long after it expires
MAX_TEXT_CHARS = 2000


class ApprovalError(ValueError):
    """A decision that cannot be taken (unknown id, already decided, expired); the message says which."""


@dataclass(frozen=True)
class ApprovalRequest:
    approval_id: str
    owner_code: str  # handed to the owner only (owner notice); never stored in clear


def approval_id_of(command_id: str) -> str:
    return hashlib.sha256(f"approval:{command_id}".encode("utf-8", "replace")).hexdigest()[:32]


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "replace")).hexdigest()


def text(value: object) -> str:
    """A value as Redis gave it, to the router's bytes client or a text client alike."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def is_approval_id(value: object) -> bool:
    return isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value)


class ApprovalsBusy(Exception):
    """Too many approvals wait already (overall or from one conversation): nothing is stored."""


@dataclass(frozen=True)
class PendingCaps:
    overall: int = 1000  # held commands waiting at once, every conversation together
    per_conversation: int = 50  # held commands waiting at once from one conversation


class ApprovalStore:
    """The router's side: store requests, take decided ids, settle outcomes."""

    def __init__(
        self, conn: redis.Redis, keys: Keys, router_id: str, ttl: int, caps: PendingCaps | None = None
    ) -> None:
        self.conn = conn
        self.keys = keys
        self.router_id = router_id
        self.ttl = ttl
        self.caps = caps or PendingCaps()
        self.taken = keys.approvals_taken(router_id)
        self._sweep_offset = 0  # where the next look for lost wake-ups starts in the pending set

    def by_conversation(self, conversation: str) -> str:
        """The pending approvals of one conversation (sorted by expiry), for its cap."""
        digest = hashlib.sha256(conversation.encode("utf-8", "replace")).hexdigest()[:24]
        return f"{self.keys.approval_prefix}by_conversation:{digest}"

    def take_room(self, approval_id: str, conversation: str, expires_at: float, now: float) -> None:
        """Take a place among the pending approvals, overall and of this conversation; ApprovalsBusy
        (and no place) when the owner already has too many waiting. A flood of held commands is
        answered `busy`, never stored: each one would be kept for days. Each counts after adding
        itself, so commands held at once (lanes, routers) never exceed a cap: at worst one is
        refused that a slower moment would have let wait."""
        mine = self.by_conversation(conversation)
        pipe = self.conn.pipeline(transaction=False)
        pipe.zremrangebyscore(mine, "-inf", f"({now}")
        pipe.zadd(mine, {approval_id: expires_at})
        pipe.zadd(self.keys.approvals_pending, {approval_id: expires_at})
        pipe.expire(mine, self.ttl + 3600)
        pipe.zcard(mine)
        pipe.zcard(self.keys.approvals_pending)
        *_, here, overall = pipe.execute()
        if int(here) <= self.caps.per_conversation and int(overall) <= self.caps.overall:
            return
        self.forget_pending(approval_id, conversation)
        if int(here) > self.caps.per_conversation:
            raise ApprovalsBusy(
                f"{int(here) - 1} approvals from this conversation already wait for the owner "
                f"(at most {self.caps.per_conversation}, ROUTER_MAX_PENDING_PER_CONVERSATION)"
            )
        raise ApprovalsBusy(
            f"{int(overall) - 1} approvals already wait for the owner (at most {self.caps.overall}, "
            "ROUTER_MAX_PENDING_APPROVALS)"
        )

    def request(
        self, envelope: CommandEnvelope, effect: dict[str, Any], text: str, now: float | None = None,
        reason: str = "", payload: list[dict[str, str]] | None = None,
    ) -> ApprovalRequest:
        """Store the command for the owner. One command id makes one approval (a command handled
        again after a crash finds its request): then `owner_code` is empty and nothing is new."""
        now = time.time() if now is None else now
        approval_id = approval_id_of(envelope.id)
        code = secrets.token_urlsafe(12)
        record = {
            "id": approval_id,
            "command": json.loads(envelope.to_json()),
            "action": envelope.action,
            "effect": effect,
            "text": text[:MAX_TEXT_CHARS],
            "reason": reason,  # why it waits, in words for the owner
            # Every field the platform will receive (router.payload_preview), not only the text.
            "payload": payload or [],
            # Who asked and what outside text that turn had read (protocol.origin).
            "origin": envelope.origin.summary() if envelope.origin is not None else None,
            "read": list(envelope.origin.taint) if envelope.origin is not None else [NO_ORIGIN],
            "conversation": envelope.conversation,
            "requested_at": now,
            "expires_at": now + self.ttl,
            "state": PENDING,
            "router_id": self.router_id,
            "owner_code_sha256": code_digest(code),
        }
        if self.conn.get(self.keys.approval(approval_id)) is not None:
            return ApprovalRequest(approval_id, "")  # asked already: never busy for its own request
        self.take_room(approval_id, envelope.conversation, record["expires_at"], now)
        if not self.save(record, new=True):
            return ApprovalRequest(approval_id, "")
        return ApprovalRequest(approval_id, code)

    def save(self, record: dict[str, Any], new: bool = False) -> bool:
        keep = max(1, int(record["expires_at"] - time.time()) + SETTLED_KEEP_SECONDS)
        text = json.dumps(record, ensure_ascii=False).encode("utf-8", "replace")
        return bool(self.conn.set(self.keys.approval(record["id"]), text, ex=keep, nx=new))

    def claim(self, approval_id: str, seconds: int = 300) -> bool:
        """Only one router settles an expired approval (the sweep runs on every router)."""
        key = f"{self.keys.approval_prefix}settling:{approval_id}"
        return bool(self.conn.set(key, self.router_id, nx=True, ex=seconds))

    def load(self, approval_id: str) -> dict[str, Any] | None:
        return load_record(self.conn, self.keys, approval_id)

    def decision(self, approval_id: str) -> dict[str, Any] | None:
        raw = self.conn.get(self.keys.approval_decision(approval_id))
        try:
            value = json.loads(raw) if raw is not None else None
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) and value.get("decision") in DECISIONS else None

    def take_decided(self) -> str | None:
        """Move one decided id into this router's list (it stays there until `done`)."""
        value = self.conn.lmove(self.keys.approvals_decided, self.taken, "RIGHT", "LEFT")
        return None if value is None else text(value)

    def held(self) -> list[str]:
        """Ids this router took and did not finish (after a crash), oldest first."""
        return [text(v) for v in reversed(self.conn.lrange(self.taken, 0, -1))]

    def done(self, approval_id: str) -> None:
        self.conn.lrem(self.taken, 1, approval_id)

    def settle(self, record: dict[str, Any], state: str, outcome: dict[str, Any]) -> dict[str, Any]:
        """Record the final state (approved/denied/expired) and its outcome; no longer pending."""
        settled = {**record, "state": state, "settled_at": time.time(), "outcome": outcome}
        self.save(settled)
        self.forget_pending(record["id"], str(record.get("conversation", "")))
        return settled

    def forget_pending(self, approval_id: str, conversation: str) -> None:
        pipe = self.conn.pipeline(transaction=False)
        pipe.zrem(self.keys.approvals_pending, approval_id)
        pipe.zrem(self.by_conversation(conversation), approval_id)
        pipe.execute()

    def expired_ids(self, now: float | None = None, limit: int = SWEEP_PAGE) -> list[str]:
        """Pending approvals past their expiry, soonest first, at most `limit`: only these are read."""
        now = time.time() if now is None else now
        found = self.conn.zrangebyscore(self.keys.approvals_pending, "-inf", now, start=0, num=limit)
        return [text(v) for v in found]

    def decided_page(self, limit: int = SWEEP_PAGE) -> list[str]:
        """Of the next page of still-pending approvals (a cursor that goes round the set, one page a
        sweep), those with a decision: a decision whose wake-up push was lost. One round trip for
        the ids, one for their decision keys, whatever the backlog."""
        ids = [text(v) for v in self.conn.zrangebyscore(
            self.keys.approvals_pending, "-inf", "+inf", start=self._sweep_offset, num=limit
        )]
        self._sweep_offset = 0 if len(ids) < limit else self._sweep_offset + limit
        if not ids:
            return []
        pipe = self.conn.pipeline(transaction=False)
        for approval_id in ids:
            pipe.exists(self.keys.approval_decision(approval_id))
        return [i for i, decided in zip(ids, pipe.execute(), strict=True) if decided]

    def relay_owner_decision(self, approval_id: str, decision: str, code: str, via: str) -> str:
        """An owner's decision typed in a chat (`APPROVAL_DECISION`): checked against the one-time
        code, then taken like the dashboard's. Returns the line to answer; raises ApprovalError."""
        if decision not in DECISIONS or not is_approval_id(approval_id):
            raise ApprovalError("an approval decision needs an approval id and approve or deny")
        record = self.load(approval_id)
        expected = str(record.get("owner_code_sha256", "")) if record else ""
        if record is None or not hmac.compare_digest(code_digest(code), expected):
            raise ApprovalError("no pending approval with that id and code; decisions come from the owner")
        return decide(self.conn, self.keys, approval_id, decision, via)


def load_record(conn: redis.Redis, keys: Keys, approval_id: str) -> dict[str, Any] | None:
    if not is_approval_id(approval_id):
        return None
    raw = conn.get(keys.approval(approval_id))
    try:
        value = json.loads(raw) if raw is not None else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def public_view(record: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """What the owner sees of a record (never the code's digest or the raw command)."""
    now = time.time() if now is None else now
    effect: dict[str, Any] = record["effect"] if isinstance(record.get("effect"), dict) else {}
    state = str(record.get("state", PENDING))
    if state == PENDING and float(record.get("expires_at", 0)) < now:
        state = "expired"
    return {
        "id": record.get("id"),
        "action": record.get("action"),
        "platform": effect.get("platform"),
        "kind": effect.get("kind"),
        "target": effect.get("target"),
        "text": record.get("text", ""),
        "payload": record.get("payload") if isinstance(record.get("payload"), list) else [],
        "read": record.get("read") if isinstance(record.get("read"), list) else [],
        "origin": record.get("origin") if isinstance(record.get("origin"), dict) else None,
        "reason": str(record.get("reason", "")),
        "conversation": record.get("conversation"),
        "requested_at": record.get("requested_at"),
        "expires_at": record.get("expires_at"),
        "state": state,
        "outcome": record.get("outcome"),
    }


def pending(conn: redis.Redis, keys: Keys, now: float | None = None) -> list[dict[str, Any]]:
    """The owner's list: every approval still waiting (expired ones show as expired until a router
    settles them), oldest request first."""
    views = []
    for approval_id in conn.zrange(keys.approvals_pending, 0, -1):
        record = load_record(conn, keys, text(approval_id))
        if record is not None:
            views.append(public_view(record, now))
    return sorted(views, key=lambda v: float(v.get("requested_at") or 0))


def decide(conn: redis.Redis, keys: Keys, approval_id: str, decision: str, by: str) -> str:
    """Take the owner's decision (the first one wins); returns the line to show, raises ApprovalError."""
    if decision not in DECISIONS:
        raise ApprovalError(f"decision must be approve or deny, not {decision!r}")
    record = load_record(conn, keys, approval_id)
    if record is None:
        raise ApprovalError(f"no approval {approval_id!r} (unknown, or long gone)")
    if record.get("state") != PENDING:
        raise ApprovalError(f"approval {approval_id} is already {record.get('state')}")
    if float(record.get("expires_at", 0)) < time.time():
        raise ApprovalError(f"approval {approval_id} has expired; the command will not run")
    value = json.dumps({"decision": decision, "by": by[:80], "ts": time.time()})
    keep = max(60, int(float(record["expires_at"]) - time.time()) + SETTLED_KEEP_SECONDS)
    if not conn.set(keys.approval_decision(approval_id), value, nx=True, ex=keep):
        raise ApprovalError(f"approval {approval_id} was already decided")
    conn.lpush(keys.approvals_decided, approval_id)
    verb = "approved: the router runs it once" if decision == "approve" else "denied: it will not run"
    effect = record["effect"] if isinstance(record.get("effect"), dict) else {}
    what = f"the {effect.get('kind') or 'command'} on {effect.get('platform') or 'the router'}"
    return f"{approval_id} ({what}) {verb}"
