"""The official MCP SDK's own client, over stdio, against `python -m router.mcp` in a subprocess.

`McpSession` runs the client's event loop in a thread of its own so synchronous tests can call
`list_tools()` / `call_tool()` one after another on one live server, and ask it for raw JSON-RPC
requests the SDK's typed helpers would never send (a malformed call).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO_ROOT = Path(__file__).resolve().parents[2]


class McpSession:
    def __init__(self, env: dict[str, str], args: tuple[str, ...] = (), stderr_path: Path | None = None,
                 command: tuple[str, ...] = ("-m", "router.mcp")) -> None:
        self.params = StdioServerParameters(
            command=sys.executable, args=[*command, *args], cwd=REPO_ROOT,
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO_ROOT), **env},
        )
        self.stderr_path = stderr_path
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._session: ClientSession | None = None
        self._closed: asyncio.Event | None = None
        self._done: Future[None] | None = None

    def __enter__(self) -> McpSession:
        self.thread.start()
        ready: Future[None] = Future()
        self._done = asyncio.run_coroutine_threadsafe(self._serve(ready), self.loop)
        ready.result(timeout=60)
        return self

    async def _serve(self, ready: Future[None]) -> None:
        self._closed = asyncio.Event()
        errlog = open(self.stderr_path, "a") if self.stderr_path else sys.stderr  # noqa: SIM115
        try:
            async with stdio_client(self.params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                self._session = session
                ready.set_result(None)
                await self._closed.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise
        finally:
            if errlog is not sys.stderr:
                errlog.close()

    def run(self, coroutine: Any, timeout: float = 90) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=timeout)

    @property
    def session(self) -> ClientSession:
        assert self._session is not None
        return self._session

    def list_tools(self) -> list[types.Tool]:
        return list(self.run(self.session.list_tools()).tools)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        result: types.CallToolResult = self.run(self.session.call_tool(name, arguments))
        return result

    def __exit__(self, *exc: object) -> None:
        assert self._closed is not None and self._done is not None
        self.loop.call_soon_threadsafe(self._closed.set)
        try:
            self._done.result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
