"""Leaving the console through a real terminal (pexpect): Ctrl-C and Ctrl-D put the terminal back as
it was, stopping while the embedded model warms up is clean, and the shell's next line starts on a
line of its own. Each run ends with `stty -a` in the same terminal, read by the test."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import sys

import pexpect
import pytest

from agent.llm.local.model_file import shipped_model_path
from tests.stack.stack_helpers import REPO_ROOT, RUN_STACK, START_AGENT, stack_env

AFTER = "; echo; echo EXIT=$?; stty -a"
needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or shipped_model_path() is None,
    reason="the embedded model is not installed (make install)",
)


def spawn(command: list[str], env: dict[str, str]) -> pexpect.spawn:
    line = " ".join(shlex.quote(part) for part in command) + AFTER.replace("echo; ", "")
    env = {**env, "TERM": "dumb"}  # no bracketed paste or colours of readline's own in what is read
    return pexpect.spawn("bash", ["--norc", "--noprofile", "-c", line], env=env, cwd=str(REPO_ROOT),
                         encoding="utf-8", timeout=90, dimensions=(24, 200))


def finish(child: pexpect.spawn) -> tuple[int, str, str]:
    """(exit code, everything printed before it, the stty report)."""
    child.expect(r"EXIT=(\d+)")
    before = child.before
    code = int(child.match.group(1))
    child.expect(pexpect.EOF)
    return code, before, child.before


def assert_terminal_sane(stty: str) -> None:
    flags = set(stty.split())
    assert {"icanon", "echo"} <= flags and not {"-icanon", "-echo"} & flags, stty


def assert_ends_on_its_own_line(before: str) -> None:
    assert before.endswith("\n"), repr(before[-80:])  # the shell's next output starts a new line


def stack_command(tmp_path, dashboard: bool = False) -> list[str]:
    for name in ("agent.env", "router.env", "dashboard.env"):
        (tmp_path / name).touch()
    return [sys.executable, str(RUN_STACK), *([] if dashboard else ["--no-dashboard"]),
            "--agent-env", str(tmp_path / "agent.env"), "--router-env", str(tmp_path / "router.env"),
            "--dashboard-env", str(tmp_path / "dashboard.env")]


@pytest.mark.slow
def test_ctrl_c_at_the_prompt_of_the_stack_gives_the_terminal_back_as_it_was(tmp_path):
    env = stack_env(tmp_path, ["never used"])
    child = spawn(stack_command(tmp_path), env)
    child.expect_exact("you> ")
    child.sendintr()
    code, before, stty = finish(child)
    assert code == 0, before
    assert_terminal_sane(stty)
    assert_ends_on_its_own_line(before)


def test_ctrl_d_at_the_prompt_of_the_agent_alone_ends_on_a_line_of_its_own(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([]), encoding="utf-8")
    env = {**os.environ, "SAFECLAW_LLM_PROVIDER": "scripted", "SAFECLAW_SCRIPTED_REPLIES": str(replies)}
    child = spawn([sys.executable, str(START_AGENT)], env)
    child.expect_exact("you> ")
    child.sendeof()
    code, before, stty = finish(child)
    assert code == 0, before
    assert_terminal_sane(stty)
    assert before.endswith("Bye.\r\n"), repr(before[-80:])


@pytest.mark.slow
@needs_model
def test_ctrl_d_while_the_embedded_model_warms_up_stops_cleanly(tmp_path):
    """The warm-up runs on a thread inside llama.cpp; freeing the model under it crashed the agent
    (exit 245, a segfault). Stopping now abandons it at its next batch, then frees the model."""
    env = {**os.environ, "SAFECLAW_LLM_PROVIDER": "local", "PYTHONFAULTHANDLER": "1",
           "SAFECLAW_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}  # nothing cached: a long warm-up
    for _ in range(3):
        child = spawn([sys.executable, str(START_AGENT)], env)
        child.expect_exact("you> ")
        child.sendeof()
        code, before, stty = finish(child)
        assert code == 0 and "Fatal Python error" not in before, before
        assert_terminal_sane(stty)
        assert before.endswith("Bye.\r\n"), repr(before[-80:])


def test_nothing_a_reply_carries_can_move_the_cursor_or_reorder_the_screen(tmp_path):
    hostile = "Hi\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\rOwner: ok\u202eevil\u2066\x9b31m done"
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([hostile]), encoding="utf-8")
    env = {**os.environ, "SAFECLAW_LLM_PROVIDER": "scripted", "SAFECLAW_SCRIPTED_REPLIES": str(replies)}
    child = spawn([sys.executable, str(START_AGENT)], env)
    child.expect_exact("you> ")
    child.sendline("hello")
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    reply = child.before
    child.sendeof()
    finish(child)
    assert "done" in reply and "click" in reply
    assert not re.search("[\x1b\x07\x9b\u202e\u2066]", reply), repr(reply)
    assert "\r" not in reply.replace("\r\n", ""), repr(reply)
