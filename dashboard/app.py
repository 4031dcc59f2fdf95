"""The dashboard's web app (Starlette on uvicorn): a JSON API, a live stream and one page.

Every request must come under a name the dashboard is opened under and, when a browser names
the page it comes from, from the dashboard's own (`dashboard.guard`). Every /api request needs
`Authorization: Bearer <DASHBOARD_TOKEN>`, compared in constant time; `DASHBOARD_PUBLIC_READ=true`
opens the GET endpoints only (not the live stream). There are no cookies and no CORS headers; a
POST must be `application/json` (what a cross-site form cannot send). The page and its static
files hold no data; the page asks for the token and keeps it in the tab's sessionStorage. The
app talks to Redis only as the `control` user, in one or a few round trips per request. The reads
are `dashboard.panel_reads`, the owner's actions `dashboard.owner_actions`; this module wires them
to routes, guards each, and serves the live stream and the page.
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
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Route

from dashboard import approvals_view, state, workspace_reads
from dashboard.audit_mirror import AuditMirror
from dashboard.endpoints import SECURITY_HEADERS, ApiError
from dashboard.guard import RequestGuard
from dashboard.live import LiveHub, event
from dashboard.owner_actions import OwnerActions
from dashboard.panel_reads import PanelReads
from dashboard.settings import DASHBOARD_DIR, DashboardSettings
from protocol.redis_link import RedisUnsafe, sync_client

log = logging.getLogger("safeclaw.dashboard")
STATIC = DASHBOARD_DIR / "static"
STATIC_NAME = re.compile(r"[a-z][a-z0-9_-]{0,40}\.(?:html|js|css)")
STREAM_KEEPALIVE_SECONDS = 15.0
STATUS_EVERY_SECONDS = 5.0
Handler = Callable[[Request], Awaitable[Response]]


class Dashboard(OwnerActions, PanelReads):
    def __init__(self, settings: DashboardSettings, conn: redis.Redis | None = None) -> None:
        self.settings = settings
        self.keys = settings.keys
        # The agent's login writes its own keys with any bytes: a value that is not UTF-8 reads as
        # U+FFFD (then fails its shape check), never as an exception that empties the page.
        self.conn = conn or sync_client(
            settings.redis_url, decode_responses=True, encoding_errors="replace",
            socket_connect_timeout=3, socket_timeout=5, accepted_eviction=settings.redis_accept_eviction,
        )
        self.requests = RequestGuard(settings)
        self.router_keys = state.RouterKeys(self.keys)
        self.mirror = AuditMirror(self.conn, self.keys)
        self.hub = LiveHub(self.look)
        self.cost_history = workspace_reads.CostHistory(settings.workspace_dir / "logs" / "cost.jsonl")

    # -- who may ask ----------------------------------------------------------------------------
    def refusal(self, request: Request, admin: bool, page: bool = False) -> Response | None:
        """The response to a request that is not answered (`RequestGuard.refusal` says why), or None."""
        refused = self.requests.refusal(request, admin, page)
        if refused is None:
            return None
        body = {"error": refused.error, "message": refused.message}
        return self.json(body, refused.status, refused.headers)

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
                message = exc.reason if isinstance(exc, RedisUnsafe) else f"Redis: {type(exc).__name__}"
                return self.json({"error": "redis_unavailable", "message": message}, 503)

        return guarded

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
