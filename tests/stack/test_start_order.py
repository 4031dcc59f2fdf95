"""`./safeclaw` starts the agent beside the router (its start costs as long as the router's), and the
agent shows nothing until the stack is up: the console's first line comes after the stack's own
lines, and a stack that fails to start never shows a console."""

from __future__ import annotations

import json

import pexpect

from tests.stack.stack_helpers import alive, stack_env
from tests.stack.test_console_leaving import finish, spawn, stack_command

BANNER = "SafeClaw is listening."


def test_the_console_opens_after_the_stack_is_up_and_dashboard_lines_are_out(tmp_path):
    env = stack_env(tmp_path, ["never used"])
    child = spawn(stack_command(tmp_path, dashboard=True), env)
    child.expect_exact(BANNER)
    before = child.before  # everything printed before the console's first line
    assert "is up" in before and "dashboard on http://" in before, before
    child.expect_exact("you> ")
    child.sendeof()
    code, _, _ = finish(child)
    assert code == 0


def test_a_router_that_cannot_start_leaves_no_console_and_no_agent(tmp_path):
    env = stack_env(tmp_path, ["never used"], ROUTER_QUOTAS="bsky:post=-1")  # refused at the router's start
    child = spawn(stack_command(tmp_path), env)
    index = child.expect_exact([BANNER, "EXIT="], timeout=120)
    output = child.before
    assert index == 1, output
    child.expect(pexpect.EOF)
    assert "the router exited" in output, output
    pids = json.loads((tmp_path / "run" / "pids.json").read_text())
    assert not alive(pids["agent"])


def test_an_agent_that_cannot_start_stops_the_start_with_its_reason_last(tmp_path):
    """A workspace it cannot write: the agent said why and left, and the runner went on to say
    "router ... is up" and "dashboard on http://..." after it, as if all were well, then exited
    without a word. Its last line now says that SafeClaw stopped, and why is above it."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the workspace's parent should be", encoding="utf-8")
    env = stack_env(tmp_path, ["never used"], SAFECLAW_WORKSPACE=str(blocker / "workspace"))
    child = spawn(stack_command(tmp_path, dashboard=True), env)
    index = child.expect_exact([BANNER, "EXIT="], timeout=120)
    output = child.before
    assert index == 1, output
    child.expect(pexpect.EOF)
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert "is not writable" in output and "SAFECLAW_WORKSPACE" in output, output
    assert lines[-1].startswith("safeclaw: the agent stopped (exit code 2; its reason is above)"), lines
    assert "SafeClaw stopped too" in lines[-1], lines
    pids = json.loads((tmp_path / "run" / "pids.json").read_text())
    assert not [name for name, pid in pids.items() if alive(pid)], pids
