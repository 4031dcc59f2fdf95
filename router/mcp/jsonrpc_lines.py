"""Every line on the MCP wire gets an answer, also one that is no JSON-RPC message.

The SDK's stdio transport validates each line and, when it is not a message, hands the error to
the session, which only logs it: the client waits for an answer that never comes. So each line
is checked here first with the SDK's own validation, and one that fails is answered at once with
a JSON-RPC error (the request's id when one can be read, else null) and never passed on:

- not UTF-8, not JSON, or nested deeper than a parser reads: -32700 (parse error);
- JSON, but no JSON-RPC message (not an object, a field missing or of the wrong type, a string
  holding a lone surrogate, which is no text): -32600 (invalid request).

A blank line is no message and is skipped.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from pydantic import ValidationError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def checked(raw: bytes) -> tuple[str | None, bytes | None]:
    """(the line to pass on, None) for a JSON-RPC message; (None, the error answer to write) for
    any other line; (None, None) for a blank one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        readable = _id_of(_parsed(raw.decode("utf-8", "replace")))
        return None, answer(readable, PARSE_ERROR, f"the message is not UTF-8 (byte {exc.start} is not)")
    if not text.strip():
        return None, None
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return None, why_not(text, exc.errors(include_url=False)[0])
    return text, None


def why_not(text: str, first: Any) -> bytes:
    """The error answer for a line the SDK could not read as a message (`first`: its first
    validation error), with the request's id when the line parses as JSON at all."""
    value = _parsed(text)
    if isinstance(value, _Unparsed):
        return answer(None, PARSE_ERROR, value)
    if not isinstance(value, dict):
        return answer(None, INVALID_REQUEST, "a JSON-RPC message is one JSON object (batches are not served)")
    request_id = _id_of(value)
    if not _is_text(value):
        return answer(request_id, INVALID_REQUEST, "a string in the message holds a lone surrogate: no text")
    if first.get("type") == "json_invalid":  # JSON, but nested deeper than the SDK's parser reads
        return answer(request_id, PARSE_ERROR, f"the message cannot be parsed: {first.get('msg', '')}"[:300])
    where = ".".join(str(part) for part in first.get("loc", ()))
    return answer(request_id, INVALID_REQUEST,
                  f"the message is not a JSON-RPC 2.0 request, notification or response ({where}: "
                  f"{first.get('msg', '')})"[:300])


class _Unparsed(str):
    """Why a line is no JSON (what `_parsed` gives back instead of a value)."""


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        return _Unparsed("the message is nested too deeply to parse")
    except json.JSONDecodeError as exc:
        return _Unparsed(f"the message is not JSON ({exc.msg} at character {exc.pos})")
    except ValueError as exc:  # an integer too long to convert
        return _Unparsed(f"the message is not JSON Python can read ({exc})"[:300])


def _id_of(value: Any) -> str | int | None:
    """The request's id when the message has a valid one, else None (the answer's id is null)."""
    request_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not _is_text(request_id):
        return None
    return request_id


def _is_text(value: Any) -> bool:
    """False when a string in `value` holds a lone surrogate (or it is too deep to look into)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


def answer(request_id: str | int | None, code: int, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return (json.dumps(error) + "\n").encode("utf-8")
