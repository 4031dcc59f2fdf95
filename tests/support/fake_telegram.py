"""A fake Telegram Bot API server for python-telegram-bot (pointed at it with `base_url`).

It speaks the real wire protocol: `POST /bot<token>/<method>` with form-encoded or JSON
parameters, answered with `{"ok": true, "result": ...}` or `{"ok": false, "error_code": ...,
"description": ...}`. `getUpdates` long-polls and honours `offset` like the real server: updates
below the offset are confirmed and never returned again; a newer `getUpdates` terminates a waiting
one with 409 Conflict. Failures can be scripted per method (429 with `retry_after`, 500, a dropped
connection), and `sendMessage` can reject Markdown for texts holding a marker, as Telegram does
for entities it cannot parse.

    with FakeTelegram() as fake:
        fake.push_message(user_id=1, chat_id=1, text="hi")
        ... TELEGRAM_API_BASE=fake.url, TELEGRAM_BOT_TOKEN=fake.token ...
        fake.wait_until(lambda: fake.sent_texts(chat_id=1))
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "123456789:" + "AAFakeTokenForTestsOnly_abcdefghijklmn"  # fake; split so scanners skip it
BOT_ID = 123456789
_INT_FIELDS = {"offset", "limit", "chat_id", "message_id", "reply_to_message_id"}
_FLOAT_FIELDS = {"timeout"}
_JSON_FIELDS = {"allowed_updates", "commands", "entities", "reply_markup", "reply_parameters",
                "link_preview_options", "scope"}


@dataclass
class Failure:
    """A scripted answer served instead of the real one."""

    status: int = 500
    body: dict[str, Any] | None = None
    drop: bool = False  # close the connection without answering (a network error)


def too_many_requests(retry_after: int = 1) -> Failure:
    return Failure(429, {"ok": False, "error_code": 429,
                         "description": f"Too Many Requests: retry after {retry_after}",
                         "parameters": {"retry_after": retry_after}})


def server_error() -> Failure:
    return Failure(500, {"ok": False, "error_code": 500, "description": "Internal Server Error"})


def dropped_connection() -> Failure:
    return Failure(drop=True)


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    answered: int | None = None  # HTTP status sent back (0: connection dropped; None: not yet)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch({})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            params = _parse_params(self.headers.get("Content-Type", ""), raw)
        except ValueError as exc:
            self._send(400, {"ok": False, "error_code": 400, "description": f"Bad Request: {exc}"})
            return
        self._dispatch(params)

    def _dispatch(self, params: dict[str, Any]) -> None:
        url = urlsplit(self.path)
        params = {**_decode({k: v[-1] for k, v in parse_qs(url.query).items()}), **params}
        parts = url.path.strip("/").split("/")
        fake = self.server.fake
        if len(parts) != 2 or not parts[0].startswith("bot"):
            self._send(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        method = parts[1]
        call = fake.record(method, params)
        if parts[0][3:] != fake.token:
            status, body = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        else:
            failure = fake.take_failure(method)
            if failure is not None and failure.drop:
                fake.answered(call, 0)
                self.close_connection = True
                return
            status, body = (failure.status, failure.body or {}) if failure else fake.answer(method, params)
        fake.answered(call, status)
        self._send(status, body)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeTelegram


def _parse_params(content_type: str, raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    if content_type.startswith("application/json"):
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("the JSON body must be an object")
        return data
    if content_type.startswith("application/x-www-form-urlencoded"):
        return _decode({k: v[-1] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()})
    raise ValueError(f"unsupported content type {content_type!r}")


def _decode(form: dict[str, str]) -> dict[str, Any]:
    """Form values are strings; the client JSON-encodes the structured ones."""
    out: dict[str, Any] = {}
    for key, value in form.items():
        if key in _INT_FIELDS:
            out[key] = int(value)
        elif key in _FLOAT_FIELDS:
            out[key] = float(value)
        elif key in _JSON_FIELDS:
            out[key] = json.loads(value)
        else:
            out[key] = value
    return out


class FakeTelegram:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.updates: list[dict[str, Any]] = []  # every update ever queued, confirmed or not
        self.confirmed = 0  # highest update_id the client confirmed with an offset
        self.reject_markdown_marker: str | None = None
        # Like the real server, only the update kinds the last getUpdates asked for are delivered;
        # False plays a server that sends every kind anyway.
        self.honour_allowed_updates = True
        self.allowed_updates: list[str] | None = None
        self._failures: dict[str, deque[Failure]] = defaultdict(deque)
        self._next_update_id = 1000
        self._next_message_id = 1
        self._poll_generation = 0
        self._stopping = False
        self._cond = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeTelegram:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-telegram", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The API base (what TELEGRAM_API_BASE holds); the client appends /bot<token>/<method>."""
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- scripting ------------------------------------------------------------------------
    def push_message(
        self,
        user_id: int,
        chat_id: int,
        text: str,
        chat_type: str = "private",
        update_kind: str = "message",
        **fields: Any,
    ) -> int:
        """Queue an incoming text message (a command when it starts with '/'); returns its update_id.

        `fields` are more Message fields as the Bot API sends them (`forward_origin`, …);
        `update_kind` the update's field that carries it (`edited_message`, `business_message`, …)."""
        with self._cond:
            self._next_update_id += 1
            update_id = self._next_update_id
            message: dict[str, Any] = {
                "message_id": self._new_message_id(),
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": chat_type, "first_name": f"Chat{chat_id}"},
                "from": {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"},
                "text": text,
            }
            if text.startswith("/"):
                command = text.split()[0]
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
            if chat_type != "private":
                message["chat"] = {"id": chat_id, "type": chat_type, "title": f"Group{chat_id}"}
            message.update(fields)
            self.updates.append({"update_id": update_id, update_kind: message})
            self._cond.notify_all()
        return update_id

    def push_callback(self, user_id: int, chat_id: int, data: str, chat_type: str = "private") -> int:
        """Queue a press on an inline button (a `callback_query` update); returns its update_id."""
        with self._cond:
            self._next_update_id += 1
            update_id = self._next_update_id
            chat = {"id": chat_id, "type": chat_type, "first_name": f"Chat{chat_id}"}
            if chat_type != "private":
                chat = {"id": chat_id, "type": chat_type, "title": f"Group{chat_id}"}
            self.updates.append({"update_id": update_id, "callback_query": {
                "id": f"cb{update_id}", "chat_instance": f"ci{chat_id}", "data": data,
                "from": {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"},
                "message": {"message_id": self._new_message_id(), "date": int(time.time()), "chat": chat,
                            "from": self._bot_user(), "text": "Approval needed"},
            }})
            self._cond.notify_all()
        return update_id

    def fail_next(self, method: str, *failures: Failure) -> None:
        """Serve these failures to the next calls of `method`, in order."""
        with self._cond:
            self._failures[method].extend(failures)

    def take_failure(self, method: str) -> Failure | None:
        with self._cond:
            queue = self._failures.get(method)
            return queue.popleft() if queue else None

    # --- inspection -----------------------------------------------------------------------
    def record(self, method: str, params: dict[str, Any]) -> Call:
        """Note a request as it arrives (a long poll is visible before it returns)."""
        call = Call(method, params)
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()
        return call

    def answered(self, call: Call, status: int) -> None:
        with self._cond:
            call.answered = status
            self._cond.notify_all()

    def calls_of(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method]

    def sent_messages(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Parameters of every sendMessage the fake accepted, in order."""
        return [c.params for c in self.calls_of("sendMessage")
                if c.answered == 200 and (chat_id is None or c.params.get("chat_id") == chat_id)]

    def sent_texts(self, chat_id: int | None = None) -> list[str]:
        return [str(p["text"]) for p in self.sent_messages(chat_id)]

    def wait_until(self, predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Block until `predicate()` is truthy (re-checked after every request); its value."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"fake Telegram: condition not met in {timeout}s; calls: "
                                         f"{[(c.method, c.answered) for c in self.calls]}")
                self._cond.wait(remaining)

    # --- the Bot API ----------------------------------------------------------------------
    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        simple: dict[str, Any] = {
            "getMe": self._bot_user(), "deleteWebhook": True, "setMyCommands": True,
            "deleteMyCommands": True, "sendChatAction": True, "close": True, "logOut": True,
            "answerCallbackQuery": True, "editMessageReplyMarkup": True,
            "getWebhookInfo": {"url": "", "has_custom_certificate": False,
                               "pending_update_count": len(self._pending(self.confirmed + 1))},
        }
        if method in simple:
            return 200, {"ok": True, "result": simple[method]}
        if method == "getUpdates":
            return self._get_updates(params)
        if method == "sendMessage":
            return self._send_message(params)
        return 404, {"ok": False, "error_code": 404, "description": "Not Found: method not found"}

    def _bot_user(self) -> dict[str, Any]:
        return {"id": BOT_ID, "is_bot": True, "first_name": "SafeClaw Test",
                "username": "safeclaw_test_bot", "can_join_groups": True,
                "can_read_all_group_messages": False, "supports_inline_queries": False}

    def _new_message_id(self) -> int:
        self._next_message_id += 1
        return self._next_message_id

    def _pending(self, offset: int) -> list[dict[str, Any]]:
        return [
            u
            for u in self.updates
            if u["update_id"] >= offset and u["update_id"] > self.confirmed and self._delivered(u)
        ]

    def _delivered(self, update: dict[str, Any]) -> bool:
        if not self.honour_allowed_updates or not self.allowed_updates:
            return True
        return any(kind in update for kind in self.allowed_updates)

    def _get_updates(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        if params.get("allowed_updates") is not None:
            self.allowed_updates = list(params["allowed_updates"])
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        with self._cond:
            self._poll_generation += 1
            generation = self._poll_generation
            self._cond.notify_all()
            if offset > 0:
                self.confirmed = max(self.confirmed, offset - 1)
            while True:
                pending = self._pending(offset)
                if pending or self._stopping:
                    return 200, {"ok": True, "result": pending[:limit]}
                if generation != self._poll_generation:
                    return 409, {"ok": False, "error_code": 409, "description": (
                        "Conflict: terminated by other getUpdates request; "
                        "make sure that only one bot instance is running")}
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return 200, {"ok": True, "result": []}
                self._cond.wait(remaining)

    def _send_message(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        text = str(params.get("text", ""))
        marker = self.reject_markdown_marker
        if params.get("parse_mode") and marker and marker in text:
            return 400, {"ok": False, "error_code": 400, "description": (
                "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0")}
        if not text.strip():
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message text is empty"}
        if len(text.encode("utf-16-le")) // 2 > 4096:
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}
        chat_id = params.get("chat_id")
        with self._cond:
            message_id = self._new_message_id()
        return 200, {"ok": True, "result": {
            "message_id": message_id, "date": int(time.time()), "text": text, "from": self._bot_user(),
            "chat": {"id": chat_id, "type": "private", "first_name": f"Chat{chat_id}"},
        }}
