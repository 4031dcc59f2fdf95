"""A command on its way from the agent to the router: the envelope, what may be a command id, and the
hashes that say what a command asks for (fingerprint) and what the mind meant (intent)."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

from protocol.origin import Origin
from protocol.wire import PROTOCOL_VERSION, ProtocolError, finite_field, load_object, require_field

_INTENT = re.compile(r"[A-Za-z0-9_:-]{0,128}")
# A command id names Redis keys and log lines: a plain token, never a pattern (`*`), a key
# separator (`:`), a path, a space or a line break (the agent sends uuid4 hex).
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def is_command_id(value: object) -> bool:
    """True for a string that may be a command id: 1-128 ASCII letters, digits, '_', '.', '-'."""
    return isinstance(value, str) and _COMMAND_ID.fullmatch(value) is not None


# Action and conversation reach log lines, Redis keys and the audit log: no control character (a
# line break would forge a log line), no half a character (JSON's "\ud800": no file or key can hold
# it), and a bounded length.
_LOGGABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+")


def _loggable(value: str, field: str, limit: int, minimum: int = 1) -> None:
    if not minimum <= len(value) <= limit or (value and not _LOGGABLE.fullmatch(value)):
        raise ProtocolError(
            f"invalid command: {field} must be {minimum}-{limit} characters, none a control character "
            "or half of one (a lone surrogate)"
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
        data = load_object(raw, "command")
        try:
            envelope = cls(
                id=require_field(data, "id", str),
                action=require_field(data, "action", str),
                params=require_field(data, "params", dict),
                conversation=require_field(data, "conversation", str),
                created_at=finite_field(data, "created_at"),
                expires_at=finite_field(data, "expires_at"),
                v=require_field(data, "v", int) if "v" in data else PROTOCOL_VERSION,
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
