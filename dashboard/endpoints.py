"""What every group of the dashboard's endpoints shares: the control user's connection and the
settings, JSON answers with the security headers, blocking work (Redis, files) on a worker thread,
and the error a handler raises for a bad request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from anyio import to_thread
from starlette.responses import JSONResponse

from dashboard.settings import DashboardSettings
from protocol.keys import Keys

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


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Endpoints:
    settings: DashboardSettings
    keys: Keys
    conn: redis.Redis

    def json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(data, status, headers={**SECURITY_HEADERS, **(headers or {})})

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await to_thread.run_sync(fn, *args)
