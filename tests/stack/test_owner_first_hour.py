"""The owner's first hour (issue 31), through a real terminal (pexpect) on the whole stack, in a
dry run: what the console says is true, said once, in plain words."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.stack.stack_helpers import REPO_ROOT, RUN_STACK, stack_dirs, stack_env
from tests.stack.test_console_leaving import finish, needs_model, spawn, stack_command


class Console:
    """The stack's console in a real terminal: say a line, read the reply up to the next prompt."""

    def __init__(self, tmp_path, replies: list[str], dashboard: bool = False, **env: str) -> None:
        self.tmp_path = tmp_path
        self.env = {**stack_env(tmp_path, replies), **env}
        self.child = spawn(stack_command(tmp_path, dashboard), self.env)
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

    def safeclaw(self, *args: str) -> subprocess.CompletedProcess:
        """`./safeclaw ARGS` in a second terminal, beside the running stack."""
        return subprocess.run([sys.executable, str(RUN_STACK), *args], capture_output=True, text=True,
                              env=self.env, cwd=REPO_ROOT, timeout=120)

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


@pytest.mark.slow
@needs_model
def test_the_embedded_model_says_the_outcome_first_and_once(tmp_path):
    """Issue 31, item 5: "Posting on Bluesky: …" then "Not done: … the kill switch is on"."""
    console = Console(tmp_path, [], dashboard=True, SAFECLAW_LLM_PROVIDER="local",
                      SAFECLAW_LLM_CACHE_DIR=str(tmp_path / "llm-cache"))
    try:
        assert console.safeclaw("stop-posting").returncode == 0
        reply = console.say('post "Testing" on bluesky')
        assert reply.startswith("Not done"), reply
        assert "kill switch" in reply and "Posting on" not in reply and "did not work" not in reply, reply
        assert console.leave() == 0
    finally:
        if console.child.isalive():
            console.child.terminate(force=True)


def test_help_offers_no_approve_or_deny_where_the_router_takes_no_chat_decision(console):
    """Issue 31: /help offered /approve and /deny, which then refused (chat approvals are off)."""
    reply = console.say("/help")
    assert "/approvals" in reply and "/approve <id>" not in reply and "/deny <id>" not in reply, reply
    assert "./safeclaw approve <id>" in reply and "dashboard" in reply, reply
    assert console.leave() == 0


def router_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(("✓ router", "✗ router"))]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.slow
def test_status_says_what_the_router_can_do_in_one_short_plain_line(console):
    """Issue 31: the router's line of /status and `./safeclaw status` ran over four lines of a terminal:
    its id, its heartbeat's age, thirteen things it can do ("answer that it is there", "keep notes in
    its own notebook") and "platforms with credentials: none"."""
    console.child.sendline("/status")
    console.child.expect_exact("safeclaw> ")
    console.child.expect_exact("you> ")
    shown = router_line(console.child.before)
    beside = router_line(console.safeclaw("status").stdout)
    for line in (shown, beside):
        assert len(line) <= 80, line
        assert line.startswith("✓ router up: it can post, reply, like, delete, read and search"), line
        assert line.endswith("; no account yet"), line
        for internal in ("heartbeat", "credentials", "safeclaw-local", "notebook", "answer that it is there"):
            assert internal not in line, line
    assert console.leave() == 0


@needs_model
@pytest.mark.slow
def test_the_walks_newcomer_questions_through_the_console_on_the_embedded_model(tmp_path):
    """The walk of issue 31, as typed in the console: "how do I connect my bluesky account?" got "I
    can't write a post for you", "reply to <link> saying congrats!" got "I need the post's link and
    your words", "thnks" got "I can't do that"."""
    console = Console(tmp_path, [], SAFECLAW_LLM_PROVIDER="local", SAFECLAW_LLM_CACHE_DIR=str(tmp_path / "llm"))
    try:
        connect = console.say("how do I connect my bluesky account?")
        assert "router/.env" in connect and "BSKY_HANDLE" in connect and "write a post" not in connect, connect
        link = "https://bsky.app/profile/alice.bsky.social/post/3kxyzabc"
        replied = console.say(f"reply to {link} saying congrats!")
        assert "Replied on Bluesky" in replied and "I need" not in replied, replied
        assert console.say("thnks").startswith("You're welcome!")
        assert console.leave() == 0
    finally:
        if console.child.isalive():
            console.child.terminate(force=True)
    assert any(entry["params"].get("text") == "congrats!" for entry in console.outbox()), console.outbox()
