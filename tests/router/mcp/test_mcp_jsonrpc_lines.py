"""Every line sent to `python -m router.mcp` over stdio gets an answer, also one that is no
JSON-RPC message (100,000 levels deep, a lone surrogate, not UTF-8, not JSON): a JSON-RPC error
with the request's id when it can be read, and the server goes on serving. The server is started
as the SDK's client starts it (tests/support/mcp_client.py), on the real redis-server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.mcp_client import REPO_ROOT

pytestmark = pytest.mark.slow
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
DEEP = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
# (the line, the id the answer carries, its error code)
BAD_LINES = [
    (DEEP, None, -32700),
    (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":' + b"[" * 300 + b"]" * 300 + b"}}", 3, -32700),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"PING","arguments":{"x":"\\ud800"}}}', 4, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\xed\xa0\x80"}}', 5, -32700),  # a surrogate as UTF-8
    (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"caf\xe9"}}', 6, -32700),  # Latin-1
    (b"this is not json", None, -32700),
    (b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', None, -32600),
    (b'{"id":8,"method":3}', 8, -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping","extra":"\\udfff"}', None, -32600),
]


@pytest.fixture
def server(redis_urls, tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO_ROOT), "REDIS_URL": redis_urls.mcp_url,
           "ROUTER_DATA_DIR": str(tmp_path / "data")}
    with open(tmp_path / "mcp.stderr", "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "router.mcp"], cwd=REPO_ROOT, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        try:
            yield process
        finally:
            process.stdin.close()
            process.wait(timeout=60)
            process.stdout.close()


def send(process: subprocess.Popen, line: bytes) -> None:
    process.stdin.write(line + b"\n")
    process.stdin.flush()


def answer(process: subprocess.Popen) -> dict:
    line = process.stdout.readline()
    assert line, "the server closed stdout"
    return json.loads(line)


def test_each_line_that_is_no_message_is_answered_and_the_server_keeps_serving(server):
    send(server, json.dumps(HELLO).encode())
    assert answer(server)["result"]["serverInfo"]["name"] == "safeclaw-router"
    send(server, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    for line, _, _ in BAD_LINES:
        send(server, line)
    send(server, b"")  # a blank line is no message: nothing to answer
    send(server, b'{"jsonrpc":"2.0","id":99,"method":"ping"}')
    answers = [answer(server)]
    while answers[-1].get("id") != 99:  # every answer up to the ping's, which comes last
        answers.append(answer(server))
    assert len(answers) == len(BAD_LINES) + 1, answers
    for (line, request_id, code), got in zip(BAD_LINES, answers, strict=False):
        assert got["jsonrpc"] == "2.0" and got["id"] == request_id, (line[:80], got)
        assert got["error"]["code"] == code and got["error"]["message"], (line[:80], got)
    assert answers[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert "nested too deeply" in answers[0]["error"]["message"]
    assert "not UTF-8" in answers[4]["error"]["message"] and "surrogate" in answers[2]["error"]["message"]
