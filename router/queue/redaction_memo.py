"""Redaction once per distinct content: a reply's text and an audit line's entry, with the command's
id held out.

The redactor costs tens of microseconds a call however small the text (a PING's reply and audit
line were a third of its time in the router), and most replies and lines repeat but for the
command id. The id is the sender's own (checked on the way in: letters, digits, `_`, `.`, `-`),
so it is left as it is and the rest is redacted as before, once per distinct rest: the redactor
is a function of its text, so what it made of a rest before is what it would make of it again.
A secret cut across the id and another field is no secret kept from the sender: the id's part
was its own; the other field's part is found on its own as ever (a piece of 8 or more characters).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from protocol.commands import is_command_id
from protocol.replies import Reply
from router.redaction import Redactor

REPLY_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(…, ensure_ascii=False), built once
_HELD = '{"id": ""'  # a reply's JSON with its id held out begins so (`Reply.to_dict`: the id first)
MAX_KEPT = 512  # distinct contents remembered (a few MB at most); then forgotten all at once
MAX_CHARS = 2048  # longer contents (feeds, posts) are redacted each time, not remembered
UNIQUE_FIELD = "payload"  # an audit line with what a write published is redacted each time


class RedactionMemo:
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._texts: dict[str, str] = {}
        self._values: dict[str, str] = {}
        self._lock = threading.Lock()  # lanes answer from their own threads

    def reply_text(self, reply: Reply) -> str | None:
        """The reply's JSON, redacted (the redactor's `value` of it, then `text` of its JSON: the
        same two passes as for any reply). None when the id cannot be held out (the caller then
        redacts it whole)."""
        body = reply.to_dict()
        own = body.get("id")
        if not is_command_id(own) or next(iter(body)) != "id":
            return None
        held = {**body, "id": ""}
        try:
            key = REPLY_JSON.encode(held)
        except (TypeError, ValueError):
            return None
        text = self._texts.get(key)
        if text is None and len(key) > MAX_CHARS:
            return None
        if text is None:
            text = self.redactor.text(REPLY_JSON.encode(self.redactor.value(held)))
            if not text.startswith(_HELD):  # a find reached into the id's place: no splicing
                return None
            self._keep(self._texts, key, text)
        return f'{{"id": "{own}"{text[len(_HELD):]}'

    def value(self, entry: dict[str, Any], own_field: str) -> dict[str, Any]:
        """The redactor's `value` of the entry, `entry[own_field]` (a command id) left as it is;
        a fresh copy each time (the caller may change it)."""
        own = entry.get(own_field)
        if not is_command_id(own):
            return self._whole(entry)
        held = {**entry, own_field: ""}
        if UNIQUE_FIELD in entry:  # a write's line: its text makes it unlike any line before it
            return {**self._whole(held), own_field: own}
        try:
            key = REPLY_JSON.encode(held)
        except (TypeError, ValueError):
            return self._whole(entry)
        if len(key) > MAX_CHARS:
            return {**self._whole(held), own_field: own}
        found = self._values.get(key)
        if found is None:
            redacted = self._whole(held)
            try:
                found = REPLY_JSON.encode(redacted)
            except (TypeError, ValueError):
                return {**redacted, own_field: own}
            self._keep(self._values, key, found)
        copy: dict[str, Any] = json.loads(found)
        copy[own_field] = own
        return copy

    def _whole(self, entry: dict[str, Any]) -> dict[str, Any]:
        redacted: dict[str, Any] = self.redactor.value(entry)
        return redacted

    def _keep(self, kept: dict[str, str], key: str, value: str) -> None:
        with self._lock:
            if len(kept) >= MAX_KEPT:
                kept.clear()
            kept[key] = value
