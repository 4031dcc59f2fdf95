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

This module holds the record's format and the owner's side (the list, the decision); the router's
side, storing and settling, is `router.policy.approval_store`.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import redis

from protocol.keys import Keys

DECISIONS = ("approve", "deny")
PENDING = "pending"
SETTLED_KEEP_SECONDS = 7 * 24 * 3600  # a decided record stays readable this long after it expires


class ApprovalError(ValueError):
    """A decision that cannot be taken (unknown id, already decided, expired); the message says which."""


def approval_id_of(command_id: str) -> str:
    return hashlib.sha256(f"approval:{command_id}".encode("utf-8", "replace")).hexdigest()[:32]


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "replace")).hexdigest()


def text(value: object) -> str:
    """A value as Redis gave it, to the router's bytes client or a text client alike."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def is_approval_id(value: object) -> bool:
    return isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value)


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
