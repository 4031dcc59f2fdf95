"""The console in the terminals a newcomer may have (pexpect): 40 columns wide, where replies broke
words in two at the edge ("pers|onal"); and a Latin-1 locale, where the first ✓ of /status stopped
the console ("channel console stopped: 'latin-1' codec can't encode...")."""

from __future__ import annotations

import json
import os
import re
import sys

import pexpect

from tests.stack.stack_helpers import REPO_ROOT, START_AGENT
from tests.stack.test_console_leaving import AFTER, assert_terminal_sane, finish

LONG_REPLY = ("Hello! I'm SafeClaw, your personal agent for the social web. I can post words you give "
              "me, reply to, like or delete a post by its link: https://bsky.app/profile/someone.example/"
              "post/3kxyzabcdefg stays whole.\n- cat = Tom")


def spawn_agent(tmp_path, columns: int, **extra: str) -> pexpect.spawn:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([LONG_REPLY]), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "COLUMNS", "LINES")}
    env.update(SAFECLAW_LLM_PROVIDER="scripted", SAFECLAW_SCRIPTED_REPLIES=str(replies), TERM="dumb", **extra)
    command = f"{sys.executable} {START_AGENT}{AFTER.replace('echo; ', '')}"
    return pexpect.spawn("bash", ["--norc", "--noprofile", "-c", command], env=env, cwd=str(REPO_ROOT),
                         encoding="latin-1", timeout=90, dimensions=(40, columns))


def screen_lines(text: str) -> list[str]:
    return [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


def test_replies_wrap_at_words_in_a_narrow_terminal(tmp_path):
    child = spawn_agent(tmp_path, 40)
    child.expect_exact("you> ")
    child.sendline("hello")
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    reply = "safeclaw> " + child.before
    child.sendeof()
    code, _, stty = finish(child)
    assert code == 0
    assert_terminal_sane(stty)
    lines = screen_lines(reply)
    words = set(LONG_REPLY.split())
    for line in lines:
        if len(line) > 40:  # only a word longer than the line may pass the edge, whole
            assert line.strip() in words, lines
        for word in line.split():
            assert word in words or word == "safeclaw>", (word, lines)
    assert "https://bsky.app/profile/someone.example/post/3kxyzabcdefg" in lines
    assert lines[-1] == "- cat = Tom"  # the reply's own line breaks are kept


def test_a_latin1_terminal_gets_plain_marks_and_the_console_lives_on(tmp_path):
    child = spawn_agent(tmp_path, 200, PYTHONIOENCODING="latin-1")
    child.expect_exact("you> ")
    child.sendline("/status")
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    status = child.before
    child.sendline("hello")
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    child.sendeof()
    code, before, stty = finish(child)
    assert code == 0 and "stopped" not in before and "codec" not in status + before, status + before
    assert_terminal_sane(stty)
    assert re.search(r"^x Redis: REDIS_URL is not set", status.replace("\r\n", "\n"), re.M), status


def test_help_and_quit_typed_as_words_do_what_they_say(tmp_path):
    """"help" went to the model (a paragraph about what it can do) and "quit" got "I can't do that:
    the embedded model can't write texts..."; the console stayed open."""
    child = spawn_agent(tmp_path, 200)
    child.expect_exact("you> ")
    child.sendline("help")
    child.expect_exact("safeclaw> ")
    child.expect_exact("you> ")
    assert "/post <platform> <text>" in child.before and "/status" in child.before, child.before
    child.sendline("quit")
    code, before, stty = finish(child)
    assert code == 0 and before.rstrip().endswith("Bye."), before
    assert_terminal_sane(stty)


def test_a_pasted_text_of_several_lines_is_one_message(tmp_path):
    """Python turns readline's bracketed paste off, so each line of a pasted text was a message of
    its own: 'post "line one' went to the model, then 'line two" on bluesky' (half a post, then
    the rest, had the first half been one the model could publish)."""
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["first answer", "second answer"]), encoding="utf-8")
    workspace = tmp_path / "workspace"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "COLUMNS", "LINES")}
    env.update(SAFECLAW_LLM_PROVIDER="scripted", SAFECLAW_SCRIPTED_REPLIES=str(replies), TERM="xterm",
               SAFECLAW_WORKSPACE=str(workspace))
    command = f"{sys.executable} {START_AGENT}{AFTER.replace('echo; ', '')}"
    child = pexpect.spawn("bash", ["--norc", "--noprofile", "-c", command], env=env, cwd=str(REPO_ROOT),
                          encoding="utf-8", timeout=90, dimensions=(40, 200))
    child.expect_exact("you> ")
    # A terminal brackets a paste only when asked to: the console asks for it at its prompt.
    assert "\x1b[?2004h" in child.before, repr(child.before[-80:])
    child.send('\x1b[200~post "line one\nline two" on bluesky\x1b[201~')  # as a terminal pastes
    child.send("\r")
    child.expect_exact("first answer")
    child.expect_exact("you> ")
    child.sendeof()
    code, before, stty = finish(child)
    assert code == 0 and "second answer" not in before, before
    assert_terminal_sane(stty)
    history = json.loads((workspace / "history" / "console.json").read_text(encoding="utf-8"))
    said = [turn for turn in json.dumps(history).split('"') if "line one" in turn]
    assert said and "line two" in said[0], history
