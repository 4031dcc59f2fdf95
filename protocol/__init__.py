"""The wire between agent and router: command envelope, reply, status values and Redis key names.

This is the only code the agent and the router share (with `protocol.untrusted`, the one
definition of how outside text is made safe to show a model). JSON only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from protocol.origin import Origin

PROTOCOL_VERSION = 1


class ProtocolError(ValueError):
    """A message on the wire is not valid JSON or not a valid envelope/reply."""


class Status(StrEnum):
    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    EXPIRED = "expired"
    PENDING_APPROVAL = "pending_approval"
    # The outcome is not known: a timeout, or a side-effecting command interrupted mid-run.
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Keys:
    """Every Redis key name of SafeClaw, under one prefix. ACLs are generated from these too."""

    prefix: str = "safeclaw:"
    command_queue: str = "safeclaw:command_queue"
    response_prefix: str = "safeclaw:response:"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Keys:
        """The names both processes agree on, with COMMAND_QUEUE / RESPONSE_PREFIX overrides."""
        return cls(
            command_queue=env.get("COMMAND_QUEUE") or cls.command_queue,
            response_prefix=env.get("RESPONSE_PREFIX") or cls.response_prefix,
        )

    def response(self, command_id: str) -> str:
        return f"{self.response_prefix}{command_id}"

    @property
    def router_prefix(self) -> str:
        """Keys only the router may touch (processing lists, idempotency, dead letters, heartbeats)."""
        return f"{self.prefix}router:"

    def processing(self, router_id: str) -> str:
        return f"{self.router_prefix}processing:{router_id}"

    def idempotency(self, command_id: str) -> str:
        return f"{self.router_prefix}idem:{command_id}"

    def intent(self, intent: str) -> str:
        return f"{self.router_prefix}intent:{intent}"

    def fingerprint(self, command_id: str) -> str:
        """The action and params a side-effecting command id was first seen with (a hash)."""
        return f"{self.router_prefix}fingerprint:{command_id}"

    def attempts(self, command_id: str) -> str:
        return f"{self.router_prefix}attempts:{command_id}"

    @property
    def dead_letter(self) -> str:
        return f"{self.router_prefix}dead_letter"

    def router_heartbeat(self, router_id: str) -> str:
        return f"{self.router_prefix}heartbeat:{router_id}"

    @property
    def agent_prefix(self) -> str:
        return f"{self.prefix}agent:"

    @property
    def agent_heartbeat(self) -> str:
        return f"{self.agent_prefix}heartbeat"

    @property
    def agent_cost(self) -> str:
        """The agent's LLM cost summary (JSON: today_usd, total_usd, daily_budget_usd,
        total_budget_usd, calls_today, tokens_today); the dashboard reads it."""
        return f"{self.agent_prefix}cost"

    @property
    def agent_autonomy(self) -> str:
        """Autonomy's last heartbeat and whether it is stuck (JSON); the dashboard reads it."""
        return f"{self.agent_prefix}autonomy"

    # -- the control plane (dashboard, ./safeclaw approvals/stop-posting) ------------------
    @property
    def control_prefix(self) -> str:
        """Keys the owner's control plane writes: the live kill switch and rule injections."""
        return f"{self.prefix}control:"

    @property
    def kill_switch(self) -> str:
        """JSON {"on": bool, "by": str, "ts": float}; every router reads it before a side effect."""
        return f"{self.control_prefix}kill_switch"

    @property
    def rule_injections(self) -> str:
        """A list of JSON {rule, why, author, ts} the owner injected, newest first; the agent applies them."""
        return f"{self.control_prefix}rule_injections"

    @property
    def audit_stream(self) -> str:
        """A Redis stream mirroring every router's audit lines (field `line`), capped.

        The routers' files are the record; this copy feeds the dashboard."""
        return f"{self.prefix}audit"

    @property
    def approval_prefix(self) -> str:
        return f"{self.prefix}approval:"

    def approval(self, approval_id: str) -> str:
        """The stored command waiting for the owner (JSON; written by the router only)."""
        return f"{self.approval_prefix}record:{approval_id}"

    @property
    def approvals_pending(self) -> str:
        """Sorted set of pending approval ids, scored by their expiry (unix seconds)."""
        return f"{self.approval_prefix}pending"

    def approval_decision(self, approval_id: str) -> str:
        """The owner's decision (SET NX: the first decision wins), JSON {decision, by, ts}."""
        return f"{self.approval_prefix}decision:{approval_id}"

    @property
    def approvals_decided(self) -> str:
        """A list of approval ids with a new decision; a router moves each into its own list and acts."""
        return f"{self.approval_prefix}decided"

    def approvals_taken(self, router_id: str) -> str:
        """The decided ids one router is acting on (recovered after a crash, like `processing`)."""
        return f"{self.router_prefix}approving:{router_id}"

    @property
    def owner_notices(self) -> str:
        """A list of JSON notices for the owner (approval asked / approved / denied / expired) that
        the agent delivers to the conversation that asked, and to Telegram when configured."""
        return f"{self.prefix}notices"

    @property
    def owner_notices_inflight(self) -> str:
        """Notices the agent took and has not delivered yet (re-delivered after a crash)."""
        return f"{self.agent_prefix}notices_inflight"


_INTENT = re.compile(r"[A-Za-z0-9_:-]{0,128}")
# A command id names Redis keys and log lines: a plain token, never a pattern (`*`), a key
# separator (`:`), a path, a space or a line break (the agent sends uuid4 hex).
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def is_command_id(value: object) -> bool:
    """True for a string that may be a command id: 1-128 ASCII letters, digits, '_', '.', '-'."""
    return isinstance(value, str) and _COMMAND_ID.fullmatch(value) is not None


# Action and conversation reach log lines and the audit log: no control character (a line break
# would forge a log line), and a bounded length.
_LOGGABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _loggable(value: str, field: str, limit: int, minimum: int = 1) -> None:
    if not minimum <= len(value) <= limit or (value and not _LOGGABLE.fullmatch(value)):
        raise ProtocolError(
            f"invalid command: {field} must be {minimum}-{limit} characters, none a control character"
        )


def command_fingerprint(action: str, params: dict[str, Any]) -> str:
    """What a command asks for (action and params), as a short hash: two commands with one id or
    one intent but different fingerprints are different commands."""
    canonical = json.dumps([action, params], sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:32]


def intent_key(turn: str, action: str, params: dict[str, Any]) -> str:
    """The intent of `action` with `params` within one turn: the same words, the same key."""
    canonical = json.dumps([turn, action, params], sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:48]


def _now() -> float:
    return time.time()


@dataclass
class CommandEnvelope:
    """One router action on its way from the agent to the router."""

    id: str  # unique per command; names the reply key and the idempotency record
    action: str  # router action name, e.g. "CREATE_POST"
    params: dict[str, Any]  # checked by the router against the skill's own schema
    conversation: str  # which conversation asked, for logs and policy
    created_at: float  # unix seconds
    expires_at: float  # unix seconds; past this the router answers `expired` and never runs it
    v: int = PROTOCOL_VERSION
    # Names what the mind meant (action + params within one turn): a second command with the same
    # intent is answered from the first one's record instead of acting again. "" = none.
    intent: str = ""
    # Who wrote the turn that asked and what outside text it had read (`protocol.origin`); set by
    # the agent's loop code, never the model. None: not sent, which counts as tainted.
    origin: Origin | None = None

    @classmethod
    def new(
        cls,
        action: str,
        params: dict[str, Any],
        conversation: str,
        ttl_seconds: float,
        intent: str = "",
        origin: Origin | None = None,
    ) -> CommandEnvelope:
        now = _now()
        return cls(
            id=uuid.uuid4().hex,
            action=action,
            params=params,
            conversation=conversation,
            created_at=now,
            expires_at=now + ttl_seconds,
            intent=intent,
            origin=origin,
        )

    def is_expired(self, now: float | None = None) -> bool:
        return (now if now is not None else _now()) > self.expires_at

    def to_json(self) -> str:
        # Its own fields as they are (json.dumps copies nothing; asdict deep-copied the params and
        # walked the origin only to have it replaced: a third of an MCP call's time in the server).
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        if self.origin is None:
            del data["origin"]
        else:
            data["origin"] = self.origin.to_dict()
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> CommandEnvelope:
        data = _load_object(raw, "command")
        try:
            envelope = cls(
                id=_require(data, "id", str),
                action=_require(data, "action", str),
                params=_require(data, "params", dict),
                conversation=_require(data, "conversation", str),
                created_at=_finite(data, "created_at"),
                expires_at=_finite(data, "expires_at"),
                v=_require(data, "v", int) if "v" in data else PROTOCOL_VERSION,
                intent=data.get("intent", ""),
                origin=Origin.from_dict(data["origin"]) if data.get("origin") is not None else None,
            )
        except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: "v": Infinity
            raise ProtocolError(f"invalid command: {exc}") from None
        _loggable(envelope.action, "action", 64)
        _loggable(envelope.conversation, "conversation", 256, minimum=0)
        if not is_command_id(envelope.id):
            raise ProtocolError("invalid command: id must be 1-128 ASCII letters, digits, '_', '.', '-'")
        if not isinstance(envelope.intent, str) or not _INTENT.fullmatch(envelope.intent):
            raise ProtocolError("invalid command: intent must be up to 128 letters, digits, '_', '-', ':'")
        if envelope.v != PROTOCOL_VERSION:
            raise ProtocolError(
                f"unsupported protocol version {envelope.v} (this side speaks {PROTOCOL_VERSION})"
            )
        return envelope


@dataclass
class Reply:
    """The router's answer to one command, pushed to `Keys.response(id)` with a TTL."""

    id: str
    status: Status
    message: str = ""  # one human-readable line, safe to show the user
    result: dict[str, Any] | None = None  # present when status is ok
    error: str | None = None  # a machine-readable error type when status is not ok
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"dry_run": true}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "status": str(self.status), "message": self.message}
        if self.result is not None:
            data["result"] = self.result
        if self.error is not None:
            data["error"] = self.error
        data.update(self.extra)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Reply:
        data = _load_object(raw, "reply")
        try:
            status = Status(_require(data, "status", str))
        except ValueError:
            raise ProtocolError(f"invalid reply: unknown status {data.get('status')!r}") from None
        known = {"id", "status", "message", "result", "error"}
        result = data.get("result")
        return cls(
            id=_require(data, "id", str),
            status=status,
            message=str(data.get("message", "")),
            result=result if isinstance(result, dict) else None,
            error=data.get("error") if isinstance(data.get("error"), str) else None,
            extra={k: v for k, v in data.items() if k not in known},
        )


def _load_object(raw: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:  # not JSON, not UTF-8, or a number past Python's digit limit
        raise ProtocolError(f"invalid {what}: not JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    except RecursionError:
        raise ProtocolError(f"invalid {what}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"invalid {what}: expected a JSON object")
    return data


def _finite(data: dict[str, Any], key: str) -> float:
    """A time field; NaN or Infinity (which json accepts) would make a command never expire."""
    value = float(_require(data, key, (int, float)))
    if not math.isfinite(value):
        raise ProtocolError(f"field {key!r} must be a finite number")
    return value


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        raise ProtocolError(f"missing field {key!r}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ProtocolError(f"field {key!r} has the wrong type")
    return value


# Platform credentials live in the router alone. The agent refuses to start when any of these
# is in its environment, and the router redacts their values from everything it emits.
PLATFORM_CREDENTIAL_VARIABLES: dict[str, tuple[str, ...]] = {
    "bsky": ("BSKY_HANDLE", "BSKY_PASSWORD"),
    "mastodon": ("MASTODON_INSTANCE", "MASTODON_TOKEN"),
    "reddit": ("REDDIT_CLIENT_ID", "REDDIT_SECRET", "REDDIT_USERNAME", "REDDIT_PASSWORD"),
    "x": ("X_API_KEY", "X_API_SECRET", "X_ACCESS_TOKEN", "X_ACCESS_SECRET"),
    "moltbook": ("MOLTBOOK_API_KEY",),
}
# Of those, the ones that are secrets (a handle or an instance URL is an identifier, not a secret).
SECRET_CREDENTIAL_VARIABLES: frozenset[str] = frozenset(
    {
        "BSKY_PASSWORD",
        "MASTODON_TOKEN",
        "REDDIT_CLIENT_ID",
        "REDDIT_SECRET",
        "REDDIT_PASSWORD",
        "X_API_KEY",
        "X_API_SECRET",
        "X_ACCESS_TOKEN",
        "X_ACCESS_SECRET",
        "MOLTBOOK_API_KEY",
    }
)
