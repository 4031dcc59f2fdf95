"""The first conversation through a real terminal, on the embedded model (issue 21, items 1 and 2):
small talk gets a short friendly answer with no internal words; a request nothing here can do runs
no action and says plainly what would."""

from __future__ import annotations

import os
import sys

import pytest

from tests.stack.stack_helpers import START_AGENT
from tests.stack.test_console_leaving import finish, needs_model, spawn

INTERNAL = ("chat", "details ran on", "CREATE_POST", "MOLTBOOK", "AUTH_TEST", "GET_PROFILE", "_MEMORY", "tool_code")


def turn(child, message: str) -> str:
    child.sendline(message)
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    return " ".join(child.before.split())


@pytest.mark.slow
@needs_model
def test_small_talk_and_requests_it_cannot_do_in_the_console(workspace):
    env = {**os.environ, "SAFECLAW_LLM_PROVIDER": "local"}
    child = spawn([sys.executable, str(START_AGENT)], env)
    child.expect_exact("you> ")
    replies = {message: turn(child, message) for message in (
        "hi", "hello", "thanks!", "how are you?",
        "write me a poem about spring", "write a post about spring and put it on bluesky",
        "what's the weather tomorrow?",
    )}
    child.sendeof()
    code, _, _ = finish(child)
    assert code == 0
    for message, reply in replies.items():
        assert not any(word in reply for word in INTERNAL), (message, reply)
        assert "/help" in reply or "/post" in reply, (message, reply)
    for message in ("hi", "hello", "thanks!", "how are you?"):
        assert "can't" not in replies[message], replies[message]
    assert "can't write a post" in replies["write a post about spring and put it on bluesky"]
    for message in ("write me a poem about spring", "what's the weather tomorrow?"):
        assert "can't do that" in replies[message] and "Nothing was done" in replies[message]
    artifact = workspace.root / "artifact.json"
    assert not artifact.exists() or '"action"' not in artifact.read_text(encoding="utf-8")  # nothing ran
