"""A restart does not forget what was in flight: the agent is killed (SIGKILL) while a post waits
for the router; the router (a real process, on a real redis-server) posts it; the restarted agent
collects the reply and tells the owner in the conversation that asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.e2e.conftest import REPO_ROOT, tool_reply
from tests.router.router_helpers import wait_until


@pytest.mark.slow
def test_a_post_sent_before_a_kill_is_reported_after_the_restart(stack):
    config = os.environ["SAFECLAW_CONFIG"]
    with open(config, "w", encoding="utf-8") as handle:
        json.dump({"timeout": 60}, handle)  # the command outlives the agent's kill
    text = "Hello from before the restart"
    pending = stack.workspace / "pending_commands.json"
    env = stack.agent_environment(
        [tool_reply("Posting.", ("CREATE_POST", {"platform": "bsky", "text": text}))]
    )
    agent = subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "agent" / "start_agent.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env=env,
    )
    try:
        assert agent.stdin is not None
        agent.stdin.write(f"Please post '{text}' on Bluesky\n")
        agent.stdin.flush()  # stdin stays open: the agent waits for the router's answer
        wait_until(lambda: pending.exists() and json.loads(pending.read_text()), "the pending record", 30)
        [(command_id, entry)] = json.loads(pending.read_text()).items()
        assert entry["action"] == "CREATE_POST" and entry["conversation"] == "console"
        admin = stack.redis.admin_client()
        assert admin.llen(stack.redis.keys.command_queue) == 1  # sent, and no router has it yet
        agent.kill()
        agent.wait(timeout=10)
    finally:
        if agent.poll() is None:
            agent.kill()
        agent.communicate()

    stack.start_router()
    response = stack.redis.keys.response(command_id)
    wait_until(lambda: admin.exists(response), "the router's reply", 30)
    assert stack.fakes.posted_texts("bsky") == [text]
    url = json.loads(admin.lindex(response, 0))["result"]["url"]
    admin.close()

    started = time.monotonic()
    run = stack.run_agent([], stdin="")  # a restart: no input, just the start-up
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"The post you asked for before the restart: sent, {url}.\n"
    assert time.monotonic() - started < 30
    assert not pending.exists()  # nothing left in flight: the last record went with its file
    turns = json.loads((stack.workspace / "history" / "console.json").read_text())["turns"]
    assert turns[-1]["response"] == run.stdout.strip() and turns[-1]["notice"] is True
    assert stack.fakes.posted_texts("bsky") == [text]  # told, not posted twice
