"""What every message between agent and router shares: the protocol version, the error for a message
that is not valid, and reading the fields of a JSON object strictly (no bool for an int, no NaN)."""

from __future__ import annotations

import json
import math
from typing import Any

PROTOCOL_VERSION = 1


class ProtocolError(ValueError):
    """A message on the wire is not valid JSON or not a valid envelope/reply."""



def load_object(raw: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:  # not JSON, not UTF-8, or a number past Python's digit limit
        raise ProtocolError(f"invalid {what}: not JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    except RecursionError:
        raise ProtocolError(f"invalid {what}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"invalid {what}: expected a JSON object")
    return data


def finite_field(data: dict[str, Any], key: str) -> float:
    """A time field; NaN or Infinity (which json accepts) would make a command never expire."""
    value = float(require_field(data, key, (int, float)))
    if not math.isfinite(value):
        raise ProtocolError(f"field {key!r} must be a finite number")
    return value


def require_field(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        raise ProtocolError(f"missing field {key!r}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ProtocolError(f"field {key!r} has the wrong type")
    return value
