"""Ctrl-C during a slow reply stops that reply, not SafeClaw (issue 31, item 2): through a real
terminal (pexpect) on the whole stack. The turn is abandoned cleanly (the model's late answer is
never acted on nor shown), what the owner wrote stays in the history, the console says so and
gives its prompt back; Ctrl-C at the prompt then leaves."""

from __future__ import annotations

import json
import time

from tests.stack.stack_helpers import alive, stack_dirs, stack_env
from tests.stack.test_console_leaving import assert_terminal_sane, finish, spawn, stack_command
from tests.support.fake_ollama import FakeOllama

LATE_ACTION = ('<tool_code>[{"name": "_MEMORY_WRITE", "params": {"new_memory": '
               '{"stopped_reply": "acted on anyway"}}}]</tool_code>')


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never came"
        time.sleep(0.05)


def test_ctrl_c_stops_a_slow_reply_and_the_stack_runs_on(tmp_path):
    with FakeOllama() as ollama:
        ollama.enqueue(ollama.slow(10, LATE_ACTION), "second answer")
        env = {**stack_env(tmp_path, []), "SAFECLAW_LLM_PROVIDER": "ollama", "OLLAMA_HOST": ollama.url}
        child = spawn(stack_command(tmp_path), env)
        child.expect_exact("Ctrl-C stops a reply")  # the banner says what Ctrl-C does
        child.expect_exact("you> ")
        child.sendline("write me a long poem")
        child.expect_exact("thinking")
        wait_for(lambda: any(r.path == "/api/chat" for r in ollama.requests))  # the model is at work
        child.sendintr()
        child.expect_exact("safeclaw> Stopped that reply")
        stopped = child.before + child.readline()
        child.expect_exact("you> ")
        pids = json.loads((tmp_path / "run" / "pids.json").read_text())
        assert alive(pids["router"]) and alive(pids["agent"]), pids  # the stack runs on
        child.sendline("and now?")
        child.expect_exact("safeclaw> second answer")
        child.expect_exact("you> ")
        child.sendintr()  # at the prompt: leave
        code, before, stty = finish(child)
    assert code == 0, before
    assert_terminal_sane(stty)
    assert "your message is kept" in stopped, stopped
    assert "acted on anyway" not in before and "fake reply" not in before
    workspace = stack_dirs(tmp_path)["workspace"]
    turns = json.loads((workspace / "history" / "console.json").read_text())["turns"]
    assert [turn["user"] for turn in turns] == ["write me a long poem", "and now?"], turns
    assert "stopped" in turns[0]["response"].lower() and turns[1]["response"] == "second answer", turns
    memory = workspace / "memory.json"
    assert "stopped_reply" not in (memory.read_text() if memory.exists() else "")
