"""A fake Ollama server (POST /api/chat, GET /api/tags) for the official `ollama` client.

Also home of `ScriptedJSONServer`, the small threaded HTTP server the three LLM fakes share:
a queue of scripted replies, a record of every request, and scripted failures (an HTTP
status with the service's own error body, a delay longer than the client's timeout, or a
body that is not JSON).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Failure:
    """One scripted failure, served instead of (or, for a pure delay, before) a reply."""

    status: int = 500  # HTTP status to answer with; 200 with `raw` means "garbage body"
    body: Any = None  # JSON-able error body in the service's own shape
    raw: bytes | None = None  # raw bytes to send instead of `body` (malformed JSON)
    delay: float = 0.0  # seconds to wait before answering (a timeout test sets > client timeout)
    text: str | None = None  # the reply's text after a pure delay (else the default reply)


@dataclass
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]  # header names lower-cased
    body: Any  # parsed JSON body, or None


@dataclass
class _Queue:
    items: deque[str | Failure] = field(default_factory=deque)
    always: Failure | None = None  # served to every request while set


class ScriptedJSONServer:
    """Base of the fakes: start with `with Fake() as fake:`, then `fake.url`."""

    def __init__(self) -> None:
        self.output_tokens = 5  # the billed output tokens each reply reports
        self.context_length = 131072  # the model's trained window, as /api/show reports it
        self.requests: list[Recorded] = []
        self._queue = _Queue()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting -------------------------------------------------------------------
    def enqueue(self, *items: str | Failure) -> None:
        """Queue reply texts (or failures), served to the next generation requests in order."""
        with self._lock:
            self._queue.items.extend(items)

    def fail_always(self, failure: Failure | None) -> None:
        """Serve `failure` to every request (SDK retries included) until reset with None."""
        self._queue.always = failure

    def next_item(self) -> str | Failure:
        with self._lock:
            if self._queue.always is not None:
                return self._queue.always
            if self._queue.items:
                return self._queue.items.popleft()
        return "fake reply"

    def slow(self, seconds: float, text: str | None = None) -> Failure:
        """A normal answer (`text`, else the default reply), sent only after `seconds`."""
        return Failure(status=200, delay=seconds, text=text)

    def malformed(self) -> Failure:
        return Failure(status=200, raw=b'{"this is": not json')

    # --- to be provided by each service ----------------------------------------------
    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """Answer one request: (status, JSON-able body). `serve()` applies failures."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> Any:
        raise NotImplementedError

    # --- serving ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first (use it as a context manager)"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedJSONServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes handlers that are sleeping out a scripted delay
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def serve(self, item: str | Failure, reply: Any) -> tuple[int, Any]:
        """Turn a dequeued item into a response: a failure's delay/status/body, else `reply`."""
        if isinstance(item, Failure):
            if item.delay:
                self._stopping.wait(item.delay)
            if item.raw is not None:
                raise _Raw(item.status, item.raw)
            if item.status != 200:
                return item.status, item.body
        return 200, reply


class _Raw(Exception):
    def __init__(self, status: int, raw: bytes) -> None:
        self.status, self.raw = status, raw


def _make_handler(fake: ScriptedJSONServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = None
            path = self.path.split("?", 1)[0]
            with fake._lock:
                fake.requests.append(
                    Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
            try:
                status, answer = fake.route(self.command, path, body)
                payload = json.dumps(answer).encode()
            except _Raw as raw:
                status, payload = raw.status, raw.raw
            self._send(status, payload)

        def _send(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing to answer

        do_GET = do_POST = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class FakeOllama(ScriptedJSONServer):
    """Ollama's native API, non-streaming, as `ollama.Client.chat(..., stream=False)` uses it."""

    def __init__(self, models: tuple[str, ...] = ("llama3.1:8b",)) -> None:
        super().__init__()
        self.models = list(models)

    def error_body(self, status: int, message: str) -> Any:
        return {"error": message}

    def server_error(self) -> Failure:
        return Failure(500, self.error_body(500, "llama runner process has terminated"))

    def unauthorized(self) -> Failure:
        return Failure(401, self.error_body(401, "unauthorized"))

    def model_not_found(self, model: str) -> Failure:
        return Failure(404, self.error_body(404, f'model "{model}" not found, try pulling it first'))

    def rate_limited(self) -> Failure:
        return Failure(429, self.error_body(429, "too many requests"))

    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/api/tags":
            return 200, {"models": [_tag(name) for name in self.models]}
        if method == "GET" and path in ("/", "/api/version"):
            return 200, {"version": "0.6.0"}
        if method == "POST" and path == "/api/show":
            model = (body or {}).get("model", "")
            if model not in self.models:
                return 404, {"error": f"model '{model}' not found"}
            return 200, _show(self.context_length)
        if method == "POST" and path == "/api/chat":
            model = (body or {}).get("model", "")
            item = self.next_item()
            if not isinstance(item, Failure) and model not in self.models:
                item = self.model_not_found(model)
            return self.serve(item, _chat_reply(model, item, self.output_tokens))
        return 404, {"error": "404 page not found"}


def _show(context_length: int) -> dict[str, Any]:
    return {
        "modelfile": "FROM llama3.1", "parameters": "", "template": "{{ .Prompt }}",
        "details": {"format": "gguf", "family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_K_M"},
        "model_info": {"general.architecture": "llama", "llama.context_length": context_length},
        "capabilities": ["completion"],
    }


def _tag(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-01-01T00:00:00.000000000Z",
        "size": 4920753328,
        "digest": "46e0c10c039e019119339687c3c1757cc81b9da49709a3b3924863ba87ca666e",
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "llama",
            "families": ["llama"],
            "parameter_size": "8.0B",
            "quantization_level": "Q4_K_M",
        },
    }


def _chat_reply(model: str, item: str | Failure, output_tokens: int = 5) -> dict[str, Any]:
    text = item if isinstance(item, str) else item.text or "fake reply"
    return {
        "model": model,
        "created_at": "2025-01-01T00:00:00.000000000Z",
        "message": {"role": "assistant", "content": text},
        "done_reason": "stop",
        "done": True,
        "total_duration": 1000000,
        "load_duration": 1000,
        "prompt_eval_count": 10,
        "prompt_eval_duration": 1000,
        "eval_count": output_tokens,
        "eval_duration": 1000,
    }
