"""The router's answer to one command: its status and the reply pushed to the agent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from protocol.wire import ProtocolError, load_object, require_field

OTHERS_WORDS = "outside_text"  # the wire name of `Reply.others_words`


class Status(StrEnum):
    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    EXPIRED = "expired"
    PENDING_APPROVAL = "pending_approval"
    # The outcome is not known: a timeout, or a side-effecting command interrupted mid-run.
    UNKNOWN = "unknown"


@dataclass
class Reply:
    """The router's answer to one command, pushed to `Keys.response(id)` with a TTL."""

    id: str
    status: Status
    message: str = ""  # one human-readable line, safe to show the user
    result: dict[str, Any] | None = None  # present when status is ok
    error: str | None = None  # a machine-readable error type when status is not ok
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"dry_run": true}
    # Whether the result holds words someone other than the owner wrote (a read of a post, a
    # feed, a page); None: not said, which the agent counts as outside words (fail closed).
    others_words: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "status": str(self.status), "message": self.message}
        if self.result is not None:
            data["result"] = self.result
        if self.error is not None:
            data["error"] = self.error
        data.update(self.extra)
        if self.others_words is not None:
            data[OTHERS_WORDS] = self.others_words
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Reply:
        data = load_object(raw, "reply")
        try:
            status = Status(require_field(data, "status", str))
        except ValueError:
            raise ProtocolError(f"invalid reply: unknown status {data.get('status')!r}") from None
        known = {"id", "status", "message", "result", "error", OTHERS_WORDS}
        others = data.get(OTHERS_WORDS)
        result = data.get("result")
        return cls(
            id=require_field(data, "id", str),
            status=status,
            message=str(data.get("message", "")),
            result=result if isinstance(result, dict) else None,
            error=data.get("error") if isinstance(data.get("error"), str) else None,
            extra={k: v for k, v in data.items() if k not in known},
            others_words=others if isinstance(others, bool) else None,
        )
