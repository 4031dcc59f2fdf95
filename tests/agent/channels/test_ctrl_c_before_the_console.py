"""A Ctrl-C between the stack's start gate and the console's own handler is kept, not lost.

`./safeclaw` starts the agent with SIGINT ignored and leaves Ctrl-C to it once it opens the start
gate. Before: until the agent's event loop took SIGINT, nobody did; a Ctrl-C in that instant was
lost and the console's prompt came up and waited (seen as a hang at 1.7 s in the Ctrl-C walk)."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

from scripts.stack_processes import agent_child_setup
from tests.agent.channels.test_console_terminal import read_until
from tests.agent.test_start_agent import REPO

SIGINT_BIT = 1 << (signal.SIGINT - 1)


def catches_sigint(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGINT_BIT)
    return False


def test_a_ctrl_c_while_the_agent_waits_for_the_stack_makes_it_leave(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["never used"]), encoding="utf-8")
    read_end, write_end = os.pipe()
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "dumb", "SAFECLAW_LLM_PROVIDER": "scripted",
           "SAFECLAW_SCRIPTED_REPLIES": str(replies)}
    agent = subprocess.Popen([sys.executable, "agent/start_agent.py", "--start-gate", str(read_end)], stdin=slave, stdout=slave, stderr=slave,
                             cwd=REPO, env=env, pass_fds=(read_end,), preexec_fn=agent_child_setup)
    os.close(slave)
    os.close(read_end)
    output = bytearray()
    try:
        deadline = time.monotonic() + 60
        while not catches_sigint(agent.pid):  # built, and waiting on the gate
            assert agent.poll() is None and time.monotonic() < deadline, bytes(output)
            time.sleep(0.05)
        os.kill(agent.pid, signal.SIGINT)  # the owner's Ctrl-C, before the console is up
        os.write(write_end, b"go")  # the runner opens the gate and leaves Ctrl-C to the agent
        os.close(write_end)
        code = agent.wait(timeout=60)
        read_until(master, output, b"Bye.", timeout=5)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        os.close(master)
    text = bytes(output).decode("utf-8", errors="replace")
    assert code == 0 and "Traceback" not in text, text
