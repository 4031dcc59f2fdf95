"""The router's side of approvals: store a held command for the owner (within the caps on how many
may wait), take the ids the owner decided, settle each record, and sweep the expired ones and the
decisions whose wake-up was lost. The record's format and the owner's side are
`protocol.approvals`."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis

from protocol.approvals import (
    DECISIONS,
    PENDING,
    SETTLED_KEEP_SECONDS,
    ApprovalError,
    approval_id_of,
    code_digest,
    decide,
    is_approval_id,
    load_record,
    text,
)
from protocol.commands import CommandEnvelope
from protocol.hold_reasons import HoldReason, sentence
from protocol.keys import Keys
from protocol.origin import NO_ORIGIN

SWEEP_PAGE = 200  # approvals one sweep reads at most, each way (expired; a look for lost wake-ups)
MAX_TEXT_CHARS = 2000


@dataclass(frozen=True)
class ApprovalRequest:
    approval_id: str
    owner_code: str  # handed to the owner only (owner notice); never stored in clear


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
        why: HoldReason | None = None, payload: list[dict[str, str]] | None = None,
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
            "reason": sentence(why) if why is not None else "",  # why it waits, in words for the owner
            "why": why.to_dict() if why is not None else None,  # the same, typed (protocol.hold_reasons)
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
        """Move one decided id into this router's list (it stays there until `done`). What the
        control login pushed that is no approval id is dropped here, by its own bytes: read as
        text (not UTF-8, replaced) `done` could never find it again."""
        while True:
            value = self.conn.lmove(self.keys.approvals_decided, self.taken, "RIGHT", "LEFT")
            if value is None or self._kept(value):
                return None if value is None else text(value)

    def held(self) -> list[str]:
        """Ids this router took and did not finish (after a crash), oldest first."""
        return [text(v) for v in reversed(self.conn.lrange(self.taken, 0, -1)) if self._kept(v)]

    def _kept(self, value: bytes | str) -> bool:
        if is_approval_id(text(value)):
            return True
        self.conn.lrem(self.taken, 1, value)  # type: ignore[arg-type]  # its own bytes
        return False

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


def decided_at(decision: dict[str, Any]) -> float:
    """When the owner decided, as the decision says; ValueError unless it is a finite number of
    seconds (missing, NaN, `true`, "now": the approval is set aside, never run on a guess)."""
    value = decision.get("ts")
    try:
        seconds = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer past any float
        seconds = math.nan
    if not math.isfinite(seconds):
        raise ValueError("the owner's decision holds no readable time")
    return seconds
