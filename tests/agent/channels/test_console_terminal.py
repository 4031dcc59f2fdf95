"""The console on a real terminal (a pty): a thinking indicator while the model works, the reply on
its own line, the next prompt after it; from a pipe, stdout holds the replies and nothing else."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

from tests.agent.test_start_agent import REPO, run_agent
from tests.support.fake_ollama import FakeOllama


def read_until(master: int, output: bytearray, wanted: bytes, after: int = 0, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while output.find(wanted, after) < 0:
        left = deadline - time.monotonic()
        assert left > 0, f"no {wanted!r} on the terminal; got {bytes(output)!r}"
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the terminal closed before {wanted!r}; got {bytes(output)!r}"
            output.extend(chunk)


def test_on_a_terminal_the_indicator_runs_and_the_reply_has_its_own_line(tmp_path):
    with FakeOllama() as ollama:
        ollama.enqueue(ollama.slow(0.8))  # the model takes a while: long enough to see the indicator
        master, slave = pty.openpty()
        env = {**os.environ, "OLLAMA_HOST": ollama.url, "TERM": "dumb"}
        agent = subprocess.Popen(
            [sys.executable, "agent/start_agent.py"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        output = bytearray()
        try:
            read_until(master, output, b"you> ")
            first_prompt = output.find(b"you> ")
            os.write(master, b"hello\n")
            read_until(master, output, b"safeclaw> ", first_prompt)
            reply_at = output.find(b"safeclaw> ", first_prompt)
            read_until(master, output, b"you> ", reply_at)
            os.write(master, b"\x04")  # Ctrl-D
            assert agent.wait(timeout=30) == 0
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
            os.close(master)
    text = bytes(output).decode("utf-8", errors="replace")
    turn = text[text.find("you> ") + len("you> ") :]
    assert "thinking…" in turn.split("safeclaw> ")[0], text  # shown while the model worked
    assert "\r\x1b[Ksafeclaw> " in turn, text  # erased, then the reply from the start of the line
    reply_line = turn[turn.index("safeclaw> ") :].split("\n", 1)[0]
    assert "you>" not in reply_line and "thinking" not in reply_line
    assert turn.index("safeclaw> ") < turn.index("you> ")  # the next prompt comes after the reply


def test_from_a_pipe_stdout_holds_only_replies_and_no_indicator_anywhere():
    with FakeOllama() as ollama:
        ollama.enqueue(ollama.slow(0.5), "second answer")
        done = run_agent(stdin="hello\nagain\n", env={"OLLAMA_HOST": ollama.url})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["fake reply", "second answer"]
    assert "thinking" not in done.stderr and "\x1b[" not in done.stdout + done.stderr


def test_what_is_typed_while_a_turn_runs_waits_unseen_for_the_next_prompt(tmp_path):
    """Typing ahead while the model worked echoed the words over the thinking indicator
    ("\\ thinking…show my notifications"), a line the reply then left on the screen."""
    with FakeOllama() as ollama:
        ollama.enqueue(ollama.slow(1.5), "second answer")
        master, slave = pty.openpty()
        env = {**os.environ, "OLLAMA_HOST": ollama.url, "TERM": "dumb"}
        agent = subprocess.Popen([sys.executable, "agent/start_agent.py"], stdin=slave, stdout=slave,
                                 stderr=slave, cwd=REPO, env=env, close_fds=True)
        os.close(slave)
        output = bytearray()
        try:
            read_until(master, output, b"you> ")
            first_prompt = output.find(b"you> ")
            os.write(master, b"hello\n")
            read_until(master, output, "thinking…".encode(), first_prompt)
            os.write(master, b"typed ahead")  # while the model still works
            read_until(master, output, b"safeclaw> ", first_prompt)
            reply_at = output.find(b"safeclaw> ", first_prompt)
            read_until(master, output, b"you> ", reply_at)
            read_until(master, output, b"typed ahead", output.find(b"you> ", reply_at))
            os.write(master, b"\n")
            read_until(master, output, b"second answer", reply_at)
            read_until(master, output, b"you> ", output.find(b"second answer"))
            os.write(master, b"\x04")
            assert agent.wait(timeout=30) == 0
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
            os.close(master)
    text = bytes(output).decode("utf-8", errors="replace")
    turn = text[text.find("you> ") + len("you> "):]
    before_reply = turn[: turn.index("safeclaw> ")]
    assert "typed ahead" not in before_reply, repr(before_reply)  # not echoed over the indicator
    assert "you> typed ahead" in turn, repr(turn)  # shown at the prompt it was typed for
