"""Tab completes slash commands at the console's interactive prompt (readline, on a real pty)."""

import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.channels.prompt_line import completions
from agent.commands import COMMAND_NAMES

REPO_ROOT = Path(__file__).resolve().parents[3]
ECHO_CONSOLE = """
import asyncio
from agent.channels.console import ConsoleChannel

async def handle(message):
    return "echo [" + message.text + "]"

asyncio.run(ConsoleChannel(handle).start())
"""


def test_completions_offer_commands_then_platforms():
    assert completions([], "/no") == ["/notifications"]
    assert completions([], "/re") == ["/reply", "/remember"]
    assert completions([], "") == [f"/{name}" for name in COMMAND_NAMES]
    assert completions(["/post"], "b") == ["bsky"]
    assert completions(["/notifications"], "") == ["bsky", "mastodon", "moltbook", "reddit", "x"]
    assert completions(["/post", "bsky"], "he") == []
    assert completions(["hello"], "/po") == []


class Pty:
    """A child process on a pseudo-terminal: what it prints is read, what we type is written."""

    def __init__(self, code: str) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(REPO_ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO_ROOT,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.output = b""

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def read_until(self, needle: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while needle.encode() not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise AssertionError(f"{needle!r} never appeared in {self.output.decode(errors='replace')!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.output += os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    continue
        return self.output.decode(errors="replace")

    def read_until_after(self, first: str, then: str) -> None:
        self.read_until(first)
        deadline = time.monotonic() + 20.0
        while then.encode() not in self.output.split(first.encode(), 1)[1]:
            if time.monotonic() > deadline:
                raise AssertionError(f"{then!r} never followed {first!r} in {self.output!r}")
            self._read_some(0.2)

    def _read_some(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            with contextlib.suppress(OSError):
                self.output += os.read(self.master, 4096)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.master)


@pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pty")
def test_tab_completes_a_command_and_its_platform_on_a_terminal():
    console = Pty(ECHO_CONSOLE)
    try:
        console.read_until("you> ")
        console.type("/noti\t")
        console.read_until("/notifications ")
        console.type("ma\t\r")
        console.read_until("echo [/notifications mastodon]")
        console.read_until_after("echo [/notifications mastodon]", "you> ")  # typed only at the prompt
        console.type("/he\t\r")
        console.read_until_after("echo [/help]", "you> ")
        console.type("\x04")  # Ctrl-D ends the console
        console.read_until("Bye.")
    finally:
        console.close()
