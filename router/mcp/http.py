"""The MCP server over Streamable HTTP (the SDK's transport), behind a bearer token.

`python -m router.mcp --http 127.0.0.1:8765` with the token in MCP_HTTP_TOKEN (or a file named by
`--token-file`): every request needs `Authorization: Bearer <token>`, compared in constant time;
anything else is answered 401 before it reaches the SDK. On a loopback address the SDK's DNS
rebinding protection (Host and Origin checks) is on. The token is the MCP server's own, never a
platform credential.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn

from router.mcp.server import RouterTools, build_server

MIN_TOKEN_CHARS = 16
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerGate:
    """An ASGI wrapper: an HTTP request without the right bearer token ends here with a 401."""

    def __init__(self, app: Asgi, token: str) -> None:
        if len(token) < MIN_TOKEN_CHARS:
            raise ValueError(f"the MCP HTTP token must be at least {MIN_TOKEN_CHARS} characters")
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = b""
            for name, value in scope.get("headers", []):
                if name.lower() == b"authorization":
                    given = value
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps(
                    {"error": "unauthorized", "message": "Authorization: Bearer <token> needed"}
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


async def serve_http(tools: RouterTools, host: str, port: int, token: str) -> None:
    app = BearerGate(build_server(tools).streamable_http_app(host=host), token)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    try:
        await server.serve()
    finally:
        await tools.link.close()
