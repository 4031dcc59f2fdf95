"""`python -m router.mcp --http`: the SDK's Streamable HTTP transport behind a bearer token, driven
by the SDK's own HTTP client."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.mcp_client import REPO_ROOT

pytestmark = pytest.mark.slow
TOKEN = "mcp-http-token-a91f03c7d2e4"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "MCP_HTTP_TOKEN": TOKEN, "ROUTER_ENV_FILE": str(tmp_path / "r.env"),
           "ROUTER_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "r.env").touch()
    process = subprocess.Popen([sys.executable, "-m", "router.mcp", "--http", f"127.0.0.1:{port}"], env=env,
                               cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the MCP HTTP server did not start"
            time.sleep(0.1)
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_a_call_with_the_token_works_and_without_it_nothing_is_served(http_server):
    assert httpx.post(http_server, json={}, timeout=10).status_code == 401
    wrong = httpx.post(http_server, json={}, headers={"Authorization": "Bearer not-the-token-at-all"}, timeout=10)
    assert wrong.status_code == 401 and TOKEN not in wrong.text

    async def session_calls():
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with streamable_http_client(http_server, http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            pong = await session.call_tool("PING", {})
        return tools, pong

    tools, pong = asyncio.run(session_calls())
    assert "CREATE_POST" in {tool.name for tool in tools.tools}
    assert pong.is_error is False and pong.structured_content["result"]["pong"] is True


def test_no_token_no_http_server(tmp_path):
    env = {"PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-m", "router.mcp", "--http", "127.0.0.1:9"], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "MCP_HTTP_TOKEN" in done.stderr
