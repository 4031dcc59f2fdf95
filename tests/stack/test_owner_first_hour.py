"""The owner's first hour (issue 31), through a real terminal (pexpect) on the whole stack, in a
dry run: what the console says is true, said once, in plain words."""

from __future__ import annotations

import json

import pytest

from tests.stack.stack_helpers import stack_dirs, stack_env
from tests.stack.test_console_leaving import finish, spawn, stack_command


class Console:
    """The stack's console in a real terminal: say a line, read the reply up to the next prompt."""

    def __init__(self, tmp_path, replies: list[str]) -> None:
        self.tmp_path = tmp_path
        self.child = spawn(stack_command(tmp_path), stack_env(tmp_path, replies))
        self.child.expect_exact("you> ", timeout=180)

    def say(self, line: str) -> str:
        self.child.sendline(line)
        self.child.expect_exact("safeclaw> ")
        self.child.expect_exact("you> ")
        return " ".join(self.child.before.split())  # one line, however the terminal wrapped it

    def leave(self) -> int:
        self.child.sendeof()
        code, _, _ = finish(self.child)
        return code

    def outbox(self) -> list[dict]:
        path = stack_dirs(self.tmp_path)["data"] / "outbox.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture
def console(tmp_path):
    session = Console(tmp_path, [])
    yield session
    if session.child.isalive():
        session.child.terminate(force=True)


def test_a_quoted_post_goes_out_without_its_quote_marks(console):
    reply = console.say('/post bsky "Testing"')
    assert reply.startswith("Posted on Bluesky"), reply
    assert console.leave() == 0
    texts = [json.dumps(entry) for entry in console.outbox()]
    assert any('"Testing"' in text for text in texts) and not any('\\"Testing\\"' in t for t in texts), texts
