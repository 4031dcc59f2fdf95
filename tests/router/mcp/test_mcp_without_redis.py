"""`python -m router.mcp` with no REDIS_URL: each call runs the one-shot tool in a child process
(the credentials stay in the router's env file, never in the server), bounded by the embedded
store and audited in the one-shot chain."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from router.audit.chain_check import verify_directory
from tests.support.fake_mastodon import FakeMastodon
from tests.support.mcp_client import REPO_ROOT, McpSession, text_of

pytestmark = pytest.mark.slow
TOKEN = "masto-oneshot-mcp-Tok3n-5521"


@pytest.fixture
def mastodon():
    server = FakeMastodon(token=TOKEN).start()
    yield server
    server.stop()


def test_calls_run_the_one_shot_pipeline_with_the_embedded_bounds(tmp_path, mastodon):
    env_file = tmp_path / "router.env"
    env_file.write_text(f"MASTODON_INSTANCE={mastodon.url}\nMASTODON_TOKEN={TOKEN}\nROUTER_QUOTAS=mastodon:post=2\n"
                        "ROUTER_APPROVE_TAINTED_WRITES=false\n")
    env = {"ROUTER_ENV_FILE": str(env_file), "ROUTER_DATA_DIR": str(tmp_path / "data")}
    with McpSession(env, stderr_path=tmp_path / "mcp.stderr") as session:
        posted = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "from an MCP client, no Redis"})
        again = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "From an MCP client, no Redis!"})
        other = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "something else entirely"})
        over = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "and a third one, one too many"})
        profile = session.call_tool("GET_PROFILE", {"platform": "mastodon"})
    assert posted.is_error is False, text_of(posted)
    assert posted.structured_content["result"]["id"] in mastodon.statuses and other.is_error is False
    assert len(mastodon.statuses) == 2
    assert again.is_error is True and again.structured_content["error"] == "duplicate_content"
    assert over.is_error is True and over.structured_content["error"] == "quota_exceeded"
    assert "00:00 UTC" in over.structured_content["message"] and over.structured_content["retry_after"] >= 1
    assert profile.is_error is False and profile.structured_content["untrusted"] is True
    for result in (posted, again, other, over, profile):
        assert TOKEN not in text_of(result) + json.dumps(result.structured_content)
    audit = tmp_path / "data" / "audit"
    assert verify_directory(audit).ok
    lines = [json.loads(line) for line in (audit / "oneshot.jsonl").read_text().splitlines()]
    assert {line["origin"]["via"] for line in lines} == {"mcp"}


def test_the_server_refuses_to_start_holding_a_platform_credential(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "MASTODON_TOKEN": TOKEN}
    done = subprocess.run([sys.executable, "-m", "router.mcp"], input="", capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert "MASTODON_TOKEN" in done.stderr and TOKEN not in done.stderr


def test_by_default_a_write_is_refused_as_it_would_wait_for_approval(tmp_path, mastodon):
    env_file = tmp_path / "router.env"
    env_file.write_text(f"MASTODON_INSTANCE={mastodon.url}\nMASTODON_TOKEN={TOKEN}\n")
    env = {"ROUTER_ENV_FILE": str(env_file), "ROUTER_DATA_DIR": str(tmp_path / "data")}
    with McpSession(env, stderr_path=tmp_path / "mcp.stderr") as session:
        held = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "needs the owner's yes"})
    assert held.is_error is True and held.structured_content["error"] == "approval_required"
    assert "MCP client" in held.structured_content["message"] and mastodon.statuses == {}


def test_a_stopped_stack_is_said_and_nothing_runs_elsewhere(tmp_path):
    """A REDIS_URL that does not answer (the stack is stopped) is never a fall back to the one-shot
    path, whose counters are not the routers': the call says what to do."""
    env = {"REDIS_URL": "redis://mcp:not-running-7f3e@127.0.0.1:9/0", "ROUTER_DATA_DIR": str(tmp_path / "data")}
    with McpSession(env, stderr_path=tmp_path / "mcp.stderr") as session:
        result = session.call_tool("GET_PROFILE", {"platform": "mastodon"})
        again = session.call_tool("PING", {})
    assert result.is_error is True and result.structured_content["error"] == "router_unreachable"
    assert "./safeclaw" in result.structured_content["message"] and again.is_error is True
    assert not (tmp_path / "data").exists()
