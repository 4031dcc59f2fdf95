"""The dashboard's web app (Starlette on uvicorn): a JSON API, a live stream and one page.

Every request must come under a name the dashboard is opened under and, when a browser names
the page it comes from, from the dashboard's own (`dashboard.guard`). Every /api request needs
`Authorization: Bearer <DASHBOARD_TOKEN>`, compared in constant time; `DASHBOARD_PUBLIC_READ=true`
opens the GET endpoints only (not the live stream). There are no cookies and no CORS headers; a
POST must be `application/json` (what a cross-site form cannot send). The page and its static
files hold no data; the page asks for the token and keeps it in the tab's sessionStorage. The
app talks to Redis only as the `control` user, in one or a few round trips per request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import redis
from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from dashboard import activity, approvals_view, audit_files, charts, readers, state, workspace_reads
from dashboard.audit_mirror import AuditMirror
from dashboard.guard import RequestGuard
from dashboard.live import LiveHub, event
from dashboard.owner_actions import ApiError, OwnerActions
from dashboard.settings import DASHBOARD_DIR, DashboardSettings
from dashboard.throttle import FailedLogins

log = logging.getLogger("safeclaw.dashboard")
STATIC = DASHBOARD_DIR / "static"
STATIC_NAME = re.compile(r"[a-z][a-z0-9_-]{0,40}\.(?:html|js|css)")
STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
STREAM_KEEPALIVE_SECONDS = 15.0
STATUS_EVERY_SECONDS = 5.0
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


class Dashboard(OwnerActions):
    def __init__(self, settings: DashboardSettings, conn: redis.Redis | None = None) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.conn = conn or redis.Redis.from_url(
            settings.redis_url, decode_responses=True, socket_connect_timeout=3, socket_timeout=5
        )
        self.requests = RequestGuard(settings)
        self.failed_logins = FailedLogins()
        self.router_keys = state.RouterKeys(self.keys)
        self.mirror = AuditMirror(self.conn, self.keys)
        self.hub = LiveHub(self.look)
        self.cost_history = workspace_reads.CostHistory(settings.workspace_dir / "logs" / "cost.jsonl")

    # -- who may ask ----------------------------------------------------------------------------
    def authorised(self, request: Request) -> bool:
        return self.requests.authorised(request)

    def refusal(self, request: Request, admin: bool, page: bool = False) -> Response | None:
        """Why this request is not answered (the response to send), or None. In this order: a
        Host the dashboard is not opened under (DNS rebinding), another site's page, an address
        that sent too many wrong tokens, no token or a wrong one (only a wrong one counts)."""
        client = request.client.host if request.client else "?"
        where = f"{request.method} {request.url.path} from {client}"
        if not self.requests.host_allowed(request):
            log.warning("421 for %s: Host is not a name this dashboard is opened under", where)
            message = (
                f"this dashboard answers only under {self.requests.names_text()}; to open it under "
                "another name set DASHBOARD_ORIGIN=<scheme>://<name>[:port] in dashboard/.env"
            )
            return self.json({"error": "wrong_host", "message": message}, 421)
        if not self.requests.origin_allowed(request):
            log.warning("403 for %s: sent by another site's page", where)
            message = "the dashboard answers only requests from its own page"
            return self.json({"error": "cross_origin", "message": message}, 403)
        if page or (not admin and self.settings.public_read and request.method == "GET"):
            return None
        wait = self.failed_logins.blocked(client)
        if wait:
            log.warning("429 for %s: too many wrong tokens", where)
            return self.json(
                {"error": "too_many_attempts", "message": "too many wrong tokens; wait"},
                429,
                {"Retry-After": str(int(wait) + 1)},
            )
        if not self.requests.authorised(request):
            given = self.requests.token_given(request)
            if given:
                self.failed_logins.failed(client)
            log.warning("401 for %s: %s", where, "a wrong token" if given else "no token")
            message = "send Authorization: Bearer <DASHBOARD_TOKEN>"
            return self.json(
                {"error": "unauthorised", "message": message}, 401, {"WWW-Authenticate": "Bearer"}
            )
        return None

    def guard(self, handler: Handler, admin: bool) -> Handler:
        async def guarded(request: Request) -> Response:
            refused = self.refusal(request, admin)
            if refused is not None:
                return refused
            try:
                return await handler(request)
            except ApiError as exc:
                return self.json({"error": "bad_request", "message": exc.message}, exc.status)
            except redis.RedisError as exc:
                log.warning("Redis error on %s: %s", request.url.path, type(exc).__name__)
                message = f"Redis: {type(exc).__name__}"
                return self.json({"error": "redis_unavailable", "message": message}, 503)

        return guarded

    def json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(data, status, headers={**SECURITY_HEADERS, **(headers or {})})

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await to_thread.run_sync(fn, *args)

    # -- reads --------------------------------------------------------------------------------
    def _status(self) -> dict[str, Any]:
        now = time.time()
        try:
            raw = state.read_raw(self.conn, self.keys, self.router_keys.get(self.conn))
        except redis.RedisError as exc:
            return state.status(None, now, type(exc).__name__)
        return state.status(raw, now)

    def _beats(self) -> dict[str, Any]:
        return readers.heartbeats(self.conn, self.keys, self.router_keys.get(self.conn), time.time())

    def _stats(self) -> dict[str, Any]:
        return readers.stats(self.conn, self.keys, self.router_keys.get(self.conn), time.time())

    def _activity(self, query: dict[str, str], before: str | None, limit: int) -> dict[str, Any]:
        return audit_files.activity_page(self.mirror, self.settings.audit_dir, query, before, limit)

    def _charts(self) -> dict[str, Any]:
        now = time.time()
        self.mirror.sync()
        cost = readers.cost(self.conn, self.keys)
        budget = cost.get("daily_budget_usd") if cost.get("available") else None
        quotas = self._stats()["platforms"]
        days = self.cost_history.per_day()
        return {"charts": charts.all_charts(self.mirror.hourly_counts(), days, budget, quotas, now)}

    def _autonomy(self) -> dict[str, Any]:
        return workspace_reads.autonomy_panel(
            self.settings.workspace_dir, self.settings.agent_config, time.time()
        )

    async def get_charts(self, request: Request) -> Response:
        return self.json(await self.run(self._charts))

    async def get_autonomy(self, request: Request) -> Response:
        return self.json(await self.run(self._autonomy))

    async def get_status(self, request: Request) -> Response:
        return self.json(await self.run(self._status))

    async def get_heartbeat(self, request: Request) -> Response:
        return self.json(await self.run(self._beats))

    async def get_activity(self, request: Request) -> Response:
        params = request.query_params
        raw = params.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            raise ApiError(400, "limit must be a whole number from 1 to 1000")
        before = params.get("before") or None
        if before is not None and not (STREAM_ID.fullmatch(before) or audit_files.parse_cursor(before)):
            raise ApiError(400, "before must be an activity id from an earlier page")
        query = {name: params.get(name, "")[:100] for name in (*activity.FILTERS, "q")}
        return self.json(await self.run(self._activity, query, before, int(raw)))

    async def get_stats(self, request: Request) -> Response:
        return self.json(await self.run(self._stats))

    async def get_cost(self, request: Request) -> Response:
        return self.json(await self.run(readers.cost, self.conn, self.keys))

    async def get_governance(self, request: Request) -> Response:
        found = await self.run(readers.governance, self.conn, self.keys, self.settings.governance_dir)
        return self.json(found)

    async def get_approvals(self, request: Request) -> Response:
        raw = request.query_params.get("offset", "0")
        if not raw.isdigit() or int(raw) > 1_000_000:
            raise ApiError(400, "offset must be a whole number")
        return self.json(await self.run(approvals_view.pending_page, self.conn, self.keys, int(raw)))

    # -- live stream (server-sent events) -----------------------------------------------------
    async def get_stream(self, request: Request) -> Response:
        return StreamingResponse(
            self.events(),
            media_type="text/event-stream",
            headers={**SECURITY_HEADERS, "X-Accel-Buffering": "no"},
        )

    async def events(self) -> AsyncIterator[str]:
        """Whatever the shared poller finds (activity, status, approvals), and a comment line
        every STREAM_KEEPALIVE_SECONDS while nothing happens."""
        queue = self.hub.subscribe()
        try:
            yield ": connected\n\n"
            while True:  # ends when the client goes: Starlette cancels this generator
                try:
                    text = await asyncio.wait_for(queue.get(), STREAM_KEEPALIVE_SECONDS)
                except TimeoutError:
                    text = ": keep-alive\n\n"
                if text is None:
                    return
                yield text
        finally:
            self.hub.unsubscribe(queue)

    def look(self, last_sent: dict[str, str]) -> list[str]:
        """The live stream's tick. One round trip asks what moved (the newest audit id, the kill
        switch, the approvals waiting); new lines are read only when there are some, and the band
        and the approvals when something moved or every STATUS_EVERY_SECONDS (a router that stops
        beating changes nothing in Redis)."""
        pipe = self.conn.pipeline(transaction=False)
        pipe.xrevrange(self.keys.audit_stream, count=1)
        pipe.get(self.keys.kill_switch)
        pipe.zcard(self.keys.approvals_pending)
        try:
            newest_line, kill, waiting = pipe.execute()
        except redis.RedisError as exc:  # the band says so once; no log line a second
            down = state.status(None, time.time(), type(exc).__name__)
            last_sent.pop("moved", None)
            return self._changed(last_sent, "status", {k: v for k, v in down.items() if k != "ts"}, down)
        found: list[str] = []
        newest_id = str(newest_line[0][0]) if newest_line else "0-0"
        if newest_id != last_sent.get("stream_id"):
            last_sent["stream_id"] = newest_id
            self.mirror.sync()  # a page's own request may have taken the new lines in first
        newest, items = self.mirror.after(last_sent.get("activity_id"))
        last_sent["activity_id"] = newest
        found += [event("activity", item) for item in items]
        moved = json.dumps([kill, waiting, newest_id])
        due = time.monotonic() >= float(last_sent.get("status_due", "0"))
        if moved == last_sent.get("moved") and not due:
            return found
        last_sent["moved"] = moved
        last_sent["status_due"] = str(time.monotonic() + STATUS_EVERY_SECONDS)
        status = self._status()
        found += self._changed(last_sent, "status", {k: v for k, v in status.items() if k != "ts"}, status)
        if status.get("pending_approvals") is not None:
            page = approvals_view.pending_page(self.conn, self.keys)
            found += self._changed(last_sent, "approvals", page, page)
        return found

    @staticmethod
    def _changed(last_sent: dict[str, str], name: str, compared: Any, value: Any) -> list[str]:
        text = json.dumps(compared, sort_keys=True)
        if last_sent.get(name) == text:
            return []
        last_sent[name] = text
        return [event(name, value)]

    # -- the page -----------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        refused = self.refusal(request, admin=False, page=True)
        if refused is not None:
            return refused
        name = request.path_params.get("name", "index.html")
        if not STATIC_NAME.fullmatch(name) or not (STATIC / name).is_file():
            return Response("not found", 404, headers=SECURITY_HEADERS)
        return FileResponse(STATIC / name, headers=SECURITY_HEADERS)


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
        Route("/api/charts", read(board.get_charts), methods=["GET"]),
        Route("/api/autonomy", read(board.get_autonomy), methods=["GET"]),
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
