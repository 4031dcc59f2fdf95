"""The small threaded HTTP server every platform fake is built on: it records each request and
answers through `route()`, after the failure a test switched on.

`fail_mode`: "auth" (401 whose body echoes everything the client sent, as a careless server
does), "rate" (429 with Retry-After), "error" (500), "slow" (answers after `delay` seconds,
past the client's timeout; `stop()` ends the wait), "garbled" (does what a write asks, then
answers 200 with an unreadable body; only for paths in `garble_paths` when that is set). Fakes
override `failure()` to answer in their platform's own shapes.

`stall(path)` (a login, a token exchange or a lookup that takes as long as the test needs): each
request to that path waits until the test calls `release()`; `reached` is set when one arrives, so
the test acts while the platform is still busy with it, without sleeping for a guessed time.

`break_writes` (a flaky platform that acted): every write (not a GET, not a login) is done, then
its answer is lost: "garbled" (200, unreadable), "error" (502), "reset" (the connection is
dropped without an answer) or "timeout" (the answer comes `delay` seconds late).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Response = tuple[int, dict[str, str], bytes]
RESET = -1  # a status that makes the handler drop the connection without answering


@dataclass
class Stall:
    """Requests to one path held until `release()`: `reached` tells the test one is being held."""

    method: str | None = None  # None: any method
    reached: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.go.set()


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes
    raw_query: str = ""

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(self.body.decode()).items()}


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload).encode()
    return status, {"Content-Type": "application/json; charset=utf-8", **(headers or {})}, body


class RecordingServer:
    """Start with `.start()` (returns self), stop with `.stop()`; `url` is its base URL."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.fail_mode: str | None = None
        self.delay = 3.0
        self.retry_after = "7"
        self.garble_paths: set[str] | None = None
        self.break_writes: str | None = None
        self.login_paths: frozenset[str] = frozenset()  # writes that only log in: never broken
        self.stalls: dict[str, Stall] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._release = threading.Event()  # ends a "slow" wait early at stop()
        self.accepted = 0  # TCP connections accepted so far
        self.ended = 0  # of those, how many the client (or the server) has closed since
        self._count_lock = threading.Lock()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def route(self, request: Recorded) -> Response:
        raise NotImplementedError

    def stall(self, path: str, method: str | None = None) -> Stall:
        """Hold every request to `path` (of `method`, if given) until the returned stall is released."""
        stall = self.stalls[path] = Stall(method)
        return stall

    def wait_if_stalled(self, request: Recorded) -> None:
        stall = self.stalls.get(request.path)
        if stall is not None and stall.method in (None, request.method):
            stall.reached.set()
            stall.go.wait()

    def respond(self, request: Recorded) -> Response:
        if self.break_writes and request.method != "GET" and request.path not in self.login_paths:
            answer = self.route(request)  # it acted; now the answer is lost
            if self.break_writes == "timeout":
                self._release.wait(self.delay)
                return answer
            if self.break_writes == "reset":
                return RESET, {}, b""
            if self.break_writes == "error":
                return json_response(502, {"error": "bad gateway"})
            return 200, {"Content-Type": "application/json"}, b"\x00\xff{unreadable"
        answer = self.failure(request) or self.route(request)
        garble = self.garble_paths is None or request.path in self.garble_paths
        if self.fail_mode == "garbled" and request.method != "GET" and garble:
            return 200, {"Content-Type": "application/json"}, b"\x00\xff{unreadable"  # it acted, though
        return answer

    def failure(self, request: Recorded) -> Response | None:
        """The configured failure for this request, or None to answer normally."""
        if self.fail_mode == "slow":
            self._release.wait(self.delay)
            return None
        if self.fail_mode == "rate":
            return json_response(429, {"error": "Too Many Requests"}, {"Retry-After": self.retry_after})
        if self.fail_mode == "error":
            return json_response(500, {"error": "internal server error"})
        if self.fail_mode == "auth":
            return json_response(401, {"error": "unauthorized", "echo": self.echo(request)})
        return None

    def echo(self, request: Recorded) -> str:
        """What a careless server repeats back on a 401: here, everything the client sent."""
        return json.dumps(request.headers) + request.body.decode(errors="replace")

    def connections(self) -> tuple[int, int]:
        """(accepted, still open): TCP connections clients opened to this server."""
        with self._count_lock:
            return self.accepted, self.accepted - self.ended

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    def start(self) -> RecordingServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as real servers: no 40 ms wait between headers and body

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length) if length else b"",
                    raw_query=parts.query,
                )
                server.wait_if_stalled(recorded)
                server.requests.append(recorded)
                status, headers, body = server.respond(recorded)
                if status == RESET:  # RST, not FIN: the client sees its request vanish
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    if recorded.headers.get("connection", "").lower() == "close":
                        self.send_header("Connection", "close")  # as real servers do; no stale reuse
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout tests)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Counting(ThreadingHTTPServer):
            def process_request(self, request: Any, client_address: Any) -> None:
                with server._count_lock:
                    server.accepted += 1
                super().process_request(request, client_address)

            def shutdown_request(self, request: Any) -> None:
                with server._count_lock:
                    server.ended += 1
                super().shutdown_request(request)

        self._httpd = Counting(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        for stall in self.stalls.values():
            stall.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
