"""The dashboard's web app (Starlette on uvicorn): a JSON API, a live stream and one page.

Every /api request needs `Authorization: Bearer <DASHBOARD_TOKEN>`, compared in constant time;
`DASHBOARD_PUBLIC_READ=true` opens the GET endpoints only (not the live stream). There are no
cookies and no CORS headers, so another site can neither read nor act; on top of that a POST
must be `application/json` (what a cross-site form cannot send) and, when it carries an Origin,
come from the dashboard's own. The page and its two static files hold no
data and are served to anyone; the page asks for the token and keeps it in the tab's
sessionStorage. The app talks to Redis only as the `control` user.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import redis
from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agent.governance.injections import MAX_PENDING
from dashboard import readers
from dashboard.settings import DASHBOARD_DIR, DashboardSettings
from dashboard.throttle import FailedLogins
from router.policy import approvals, kill_switch

log = logging.getLogger("safeclaw.dashboard")
STATIC = DASHBOARD_DIR / "static"
MAX_BODY_BYTES = 16_384
MAX_RULE_CHARS = 2000
STREAM_POLL_SECONDS = 0.5
STREAM_KEEPALIVE_SECONDS = 15.0
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
Handler = Callable[[Request], Awaitable[Response]]


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "replace")).digest()


class Dashboard:
    def __init__(self, settings: DashboardSettings, conn: redis.Redis | None = None) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.conn = conn or redis.Redis.from_url(
            settings.redis_url, decode_responses=True, socket_connect_timeout=3, socket_timeout=5
        )
        self._token_digest = _digest(settings.token)
        self.failed_logins = FailedLogins()

    # -- auth ---------------------------------------------------------------------------------
    def authorised(self, request: Request) -> bool:
        parts = request.headers.get("authorization", "").split(None, 1)
        scheme, given = (parts[0], parts[1].strip()) if len(parts) == 2 else ("", "")
        # Digests of equal length, compared in constant time: neither the length nor a prefix leaks.
        matches = hmac.compare_digest(_digest(given), self._token_digest)
        return scheme.lower() == "bearer" and matches

    @staticmethod
    def same_origin(request: Request) -> bool:
        """A request a browser sent from another page carries that page's Origin: only the
        dashboard's own (or none, from a command-line client) may act."""
        origin = request.headers.get("origin")
        return origin is None or urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()

    def guard(self, handler: Handler, admin: bool) -> Handler:
        async def guarded(request: Request) -> Response:
            open_read = not admin and self.settings.public_read and request.method == "GET"
            client = request.client.host if request.client else "?"
            wait = 0.0 if open_read else self.failed_logins.blocked(client)
            if wait:
                log.warning(
                    "429 for %s %s from %s: too many wrong tokens", request.method, request.url.path, client
                )
                return self.json(
                    {"error": "too_many_attempts", "message": "too many wrong tokens; wait"},
                    429,
                    {"Retry-After": str(int(wait) + 1)},
                )
            if not open_read and not self.authorised(request):
                why = "no token" if not request.headers.get("authorization") else "a wrong token"
                self.failed_logins.failed(client)
                log.warning("401 for %s %s from %s: %s", request.method, request.url.path, client, why)
                message = "send Authorization: Bearer <DASHBOARD_TOKEN>"
                return self.json(
                    {"error": "unauthorised", "message": message}, 401, {"WWW-Authenticate": "Bearer"}
                )
            if request.method != "GET" and not self.same_origin(request):
                log.warning(
                    "403 for %s %s from %s: sent by another site's page",
                    request.method,
                    request.url.path,
                    client,
                )
                message = "the dashboard acts only on requests from its own page"
                return self.json({"error": "cross_origin", "message": message}, 403)
            try:
                return await handler(request)
            except ApiError as exc:
                return self.json({"error": "bad_request", "message": exc.message}, exc.status)
            except redis.RedisError as exc:
                log.warning("Redis error on %s: %s", request.url.path, type(exc).__name__)
                message = f"Redis: {type(exc).__name__}"
                return self.json({"error": "redis_unavailable", "message": message}, 503)

        return guarded

    @staticmethod
    def json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(data, status, headers={**SECURITY_HEADERS, **(headers or {})})

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await to_thread.run_sync(fn, *args)

    # -- reads --------------------------------------------------------------------------------
    def _status(self) -> dict[str, Any]:
        try:
            self.conn.ping()
        except redis.RedisError:
            return readers.status(None, self.keys)
        return readers.status(self.conn, self.keys)

    async def get_status(self, request: Request) -> Response:
        return self.json(await self.run(self._status))

    async def get_heartbeat(self, request: Request) -> Response:
        return self.json(await self.run(readers.heartbeats, self.conn, self.keys))

    async def get_activity(self, request: Request) -> Response:
        raw = request.query_params.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            raise ApiError(400, "limit must be a whole number from 1 to 1000")
        return self.json({"activity": await self.run(readers.activity, self.conn, self.keys, int(raw))})

    async def get_stats(self, request: Request) -> Response:
        return self.json(await self.run(readers.stats, self.conn, self.keys))

    async def get_cost(self, request: Request) -> Response:
        return self.json(await self.run(readers.cost, self.conn, self.keys))

    async def get_governance(self, request: Request) -> Response:
        found = await self.run(readers.governance, self.conn, self.keys, self.settings.governance_dir)
        return self.json(found)

    async def get_approvals(self, request: Request) -> Response:
        return self.json({"approvals": await self.run(readers.pending_approvals, self.conn, self.keys)})

    # -- admin --------------------------------------------------------------------------------
    async def body(self, request: Request) -> dict[str, Any]:
        """The JSON object posted. Only `Content-Type: application/json`: what a form or a
        text/plain fetch from another site can send without a preflight never acts."""
        media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type != "application/json":
            raise ApiError(415, "send the body as JSON, with Content-Type: application/json")
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ApiError(400, "the body must be a JSON object") from None
        if not isinstance(data, dict):
            raise ApiError(400, "the body must be a JSON object")
        return data

    async def post_kill(self, request: Request) -> Response:
        data = await self.body(request)
        if not isinstance(data.get("on"), bool):
            raise ApiError(400, 'send {"on": true} to stop every side effect, {"on": false} to resume')
        value = await self.run(kill_switch.flip, self.conn, self.keys, data["on"], "dashboard")
        log.info("kill switch turned %s from the dashboard", "on" if data["on"] else "off")
        return self.json({"kill_switch": value})

    async def post_inject_rule(self, request: Request) -> Response:
        data = await self.body(request)
        rule, why = data.get("rule"), data.get("why", "")
        if not isinstance(rule, str) or not rule.strip() or not isinstance(why, str):
            raise ApiError(400, 'send {"rule": "…", "why": "…"} with a non-empty rule')
        if len(rule) > MAX_RULE_CHARS or len(why) > MAX_RULE_CHARS:
            raise ApiError(400, f"rule and why are at most {MAX_RULE_CHARS} characters each")
        entry = {"rule": rule.strip(), "why": why.strip(), "author": "owner (dashboard)", "ts": time.time()}
        await self.run(self.queue_for_agent, json.dumps(entry, ensure_ascii=False))
        log.info("rule injected from the dashboard (%d characters)", len(rule.strip()))
        return self.json({"injected": entry})

    def queue_for_agent(self, raw: str) -> None:
        """Push onto the rule-injection list, which the agent empties as it applies; past
        MAX_PENDING waiting entries the push is taken back and refused (the agent is not running)."""
        length = int(self.conn.lpush(self.keys.rule_injections, raw))
        if length > MAX_PENDING:
            self.conn.lrem(self.keys.rule_injections, 1, raw)
            raise ApiError(
                503,
                f"{MAX_PENDING} rules already wait for the agent to apply them; start the agent "
                "(autonomy applies them within seconds), then try again",
            )

    async def post_accept(self, request: Request) -> Response:
        """The owner accepts proposal N: an `{accept: N}` entry on the rule-injection list, which
        the agent applies with the same `Governance.accept` as `./safeclaw rules accept N`."""
        await self.body(request)
        raw = str(request.path_params["number"])
        if not raw.isdigit() or not 1 <= int(raw) <= 1_000_000:
            raise ApiError(400, "the proposal number must be a whole number from 1")
        number = int(raw)
        known = await self.run(readers.proposals, self.settings.governance_dir) or []
        found = next((p for p in known if p["number"] == number), None)
        if found is None:
            open_ones = ", ".join(str(p["number"]) for p in known if not p["accepted_at"]) or "none"
            message = f"there is no proposal #{number}; open proposals: {open_ones}"
            return self.json({"error": "not_found", "message": message}, 404)
        if found["accepted_at"]:
            return self.json({"error": "conflict", "message": f"proposal #{number} is already accepted"}, 409)
        entry = {"accept": number, "author": "owner (dashboard)", "ts": time.time()}
        await self.run(self.queue_for_agent, json.dumps(entry))
        log.info("proposal #%d accepted from the dashboard", number)
        message = f"proposal #{number} accepted; the agent writes it into DOS.md within seconds"
        return self.json({"accept_requested": entry, "message": message}, 202)

    async def post_decision(self, request: Request) -> Response:
        await self.body(request)
        approval_id = str(request.path_params["approval_id"])
        decision = "approve" if request.url.path.endswith("/approve") else "deny"
        try:
            line = await self.run(approvals.decide, self.conn, self.keys, approval_id, decision, "dashboard")
        except approvals.ApprovalError as exc:
            return self.json({"error": "conflict", "message": str(exc)}, 409)
        log.info("approval %s: %s from the dashboard", approval_id, decision)
        return self.json({"id": approval_id, "decision": decision, "message": line})

    # -- live stream (server-sent events) -----------------------------------------------------
    async def get_stream(self, request: Request) -> Response:
        return StreamingResponse(
            self.events(request),
            media_type="text/event-stream",
            headers={**SECURITY_HEADERS, "X-Accel-Buffering": "no"},
        )

    async def events(self, request: Request) -> AsyncIterator[str]:
        """activity (each new audit record), status and approvals (whenever they change)."""
        last_id = await self.run(readers.last_stream_id, self.conn, self.keys)
        sent: dict[str, str] = {}
        quiet_since = time.monotonic()
        while True:  # ends when the client goes: Starlette cancels this generator
            out = []
            try:
                last_id, records = await self.run(readers.activity_since, self.conn, self.keys, last_id)
                out += [_event("activity", record) for record in records]
                snapshot = {
                    "status": await self.run(self._status),
                    "approvals": {
                        "approvals": await self.run(readers.pending_approvals, self.conn, self.keys)
                    },
                }
            except redis.RedisError:
                snapshot = {"status": readers.status(None, self.keys)}
            for name, value in snapshot.items():
                text = json.dumps(value, sort_keys=True)
                if name == "status":  # ages change every second: compare without them
                    text = json.dumps(_without_ages(value), sort_keys=True)
                if sent.get(name) != text:
                    sent[name] = text
                    out.append(_event(name, value))
            if out:
                quiet_since = time.monotonic()
                yield "".join(out)
            elif time.monotonic() - quiet_since > STREAM_KEEPALIVE_SECONDS:
                quiet_since = time.monotonic()
                yield ": keep-alive\n\n"
            await asyncio.sleep(STREAM_POLL_SECONDS)

    # -- the page -----------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in ("index.html", "dashboard.js", "dashboard.css"):
            return Response("not found", 404, headers=SECURITY_HEADERS)
        return FileResponse(STATIC / name, headers=SECURITY_HEADERS)


def _without_ages(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_ages(v) for k, v in value.items() if k not in ("age", "ts")}
    if isinstance(value, list):
        return [_without_ages(v) for v in value]
    return value


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def create_app(settings: DashboardSettings, conn: redis.Redis | None = None) -> Starlette:
    board = Dashboard(settings, conn)
    read, admin = (lambda h: board.guard(h, admin=False)), (lambda h: board.guard(h, admin=True))
    routes = [
        Route("/", board.page, methods=["GET"]),
        Route("/static/{name}", board.page, methods=["GET"]),
        Route("/api/status", read(board.get_status), methods=["GET"]),
        Route("/api/heartbeat", read(board.get_heartbeat), methods=["GET"]),
        Route("/api/activity", read(board.get_activity), methods=["GET"]),
        Route("/api/stats", read(board.get_stats), methods=["GET"]),
        Route("/api/cost", read(board.get_cost), methods=["GET"]),
        Route("/api/governance", read(board.get_governance), methods=["GET"]),
        Route("/api/approvals", read(board.get_approvals), methods=["GET"]),
        # The live stream carries every approval and audit line: never opened by public read.
        Route("/api/stream", admin(board.get_stream), methods=["GET"]),
        Route("/api/kill", admin(board.post_kill), methods=["POST"]),
        Route("/api/inject-rule", admin(board.post_inject_rule), methods=["POST"]),
        Route("/api/proposals/{number}/accept", admin(board.post_accept), methods=["POST"]),
        Route("/api/approvals/{approval_id}/approve", admin(board.post_decision), methods=["POST"]),
        Route("/api/approvals/{approval_id}/deny", admin(board.post_decision), methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.dashboard = board
    return app
