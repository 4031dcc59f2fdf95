"""The console as a newcomer's terminal treats it, through an interactive shell in a real terminal
(pexpect): Ctrl-Z then `fg` gives the prompt back as it was, Ctrl-C during a slow model answer
leaves at once, and a closed terminal (SIGHUP) stops the stack in order, Redis last."""

from __future__ import annotations

import os
import re
import time
from datetime import datetime

import pexpect

from tests.stack.stack_helpers import (
    PROMPT,
    interactive_shell,
    processes_naming,
    stack_arguments,
    stack_env,
)
from tests.support.fake_ollama import FakeOllama


def shell_status(shell: pexpect.spawn) -> int:
    shell.sendline("echo EXIT=$?")
    shell.expect(r"EXIT=(\d+)")
    code = int(shell.match.group(1))
    shell.expect_exact(PROMPT)
    return code


def gone(marker: str, seconds: float = 60.0) -> list[int]:
    """Wait for the processes naming `marker` to end; those still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while (left := processes_naming(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_ctrl_z_then_fg_gives_the_prompt_back_with_the_line_being_typed(tmp_path):
    """Before: after `fg` no prompt was drawn and the terminal stayed in the shell's mode, so every
    character typed showed twice (the terminal's echo, then the prompt's)."""
    env = {**stack_env(tmp_path, ["Nice to meet you."]), "SAFECLAW_SKIP_INSTALL": "1"}
    shell = interactive_shell(env)
    shell.sendline("./safeclaw agent")
    shell.expect_exact("you> ")
    shell.send("hel")
    shell.expect_exact("hel")
    shell.sendcontrol("z")
    shell.expect_exact(PROMPT)
    assert "Stopped" in shell.before
    shell.sendline("fg")
    shell.expect_exact("you> hel")
    shell.send("lo\r")
    shell.expect_exact("safeclaw> ")
    assert shell.before.count("lo") == 1, repr(shell.before)  # echoed once
    shell.expect_exact("Nice to meet you.")
    shell.expect_exact("you> ")
    shell.sendeof()
    shell.expect_exact(PROMPT)
    assert shell_status(shell) == 0
    history = (tmp_path / "workspace" / "history" / "console.json").read_text(encoding="utf-8")
    assert '"hello"' in history
    shell.sendline("exit")
    shell.expect(pexpect.EOF)


def test_ctrl_c_during_a_slow_answer_stops_it_and_a_second_leaves_at_once(tmp_path):
    """Before: the turn's thread held the agent until the model answered, and the stack's runner
    killed it after 10 s ("did not stop within 10s; killing it"). Then (issue 31) Ctrl-C during a
    reply stopped the whole stack; it now stops the reply, and Ctrl-C at the prompt leaves at once
    though the stopped reply's model call is still under way."""
    with FakeOllama() as ollama:
        ollama.enqueue(ollama.slow(120), "too late")
        env = {**stack_env(tmp_path, []), "SAFECLAW_SKIP_INSTALL": "1", "SAFECLAW_LLM_PROVIDER": "ollama",
               "OLLAMA_HOST": ollama.url}
        shell = interactive_shell(env)
        shell.sendline(f"./safeclaw {stack_arguments(tmp_path)}")
        shell.expect_exact("you> ")
        shell.sendline("hello")
        shell.expect_exact("thinking")
        deadline = time.monotonic() + 60
        while not ollama.requests and time.monotonic() < deadline:  # the model has the question
            time.sleep(0.05)
        assert ollama.requests
        shell.sendintr()
        shell.expect_exact("Stopped that reply")
        shell.expect_exact("you> ")
        shell.sendintr()
        shell.expect_exact(PROMPT)
        printed = shell.before
        assert shell_status(shell) == 0
    assert "Bye." in printed and "did not stop" not in printed and "killing" not in printed, printed
    assert "Traceback" not in printed, printed
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
    assert gone(str(tmp_path)) == []


def test_closing_the_terminal_stops_the_stack_in_order(tmp_path):
    """Before: the runner died of the SIGHUP without stopping anything; its children, told by the
    kernel, stopped all at once (the router could report Redis gone under it). Now the router has
    stopped before Redis is asked to."""
    env = {**stack_env(tmp_path, ["never used"]), "SAFECLAW_SKIP_INSTALL": "1"}
    shell = interactive_shell(env)
    shell.sendline(f"./safeclaw {stack_arguments(tmp_path)}")
    shell.expect_exact("you> ")
    os.close(shell.child_fd)  # the terminal window is closed
    shell.closed = True
    assert gone(str(tmp_path)) == []
    router_log = (tmp_path / "logs" / "router.log").read_text(encoding="utf-8")
    assert "SIGTERM received" in router_log and "stopped" in router_log, router_log
    assert "Redis unavailable" not in router_log, router_log
    redis_log = (tmp_path / "run" / "redis" / "redis.log").read_text(encoding="utf-8")
    assert "ready to exit" in redis_log, redis_log[-600:]  # its data saved
    assert logged_at(router_log, "stopped") <= logged_at(redis_log, "User requested shutdown")


def logged_at(log: str, words: str) -> datetime:
    """When the last line holding `words` was written, in the router's or Redis' log format."""
    line = [line for line in log.splitlines() if words in line][-1]
    if found := re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ", line):  # the router's
        return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f")
    found = re.search(r"(\d\d? \w{3} \d{4} \d\d:\d\d:\d\d\.\d{3}) ", line)  # Redis'
    assert found, line
    return datetime.strptime(found.group(1), "%d %b %Y %H:%M:%S.%f")
