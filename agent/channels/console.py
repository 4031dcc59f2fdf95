"""The console channel: a prompt on a terminal; one message per line from a pipe.

From a pipe, stdout carries nothing but replies (logs go to stderr and the log file), and the
channel returns at end of input so the process can exit 0. On a terminal, the next `you>` prompt
appears only after the reply, and a thinking indicator runs on stderr (when stderr is a terminal
too) while the turn works; it is erased before the reply prints on its own line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
import threading
from typing import TextIO

from agent.channels.base import BaseChannel, IncomingMessage, MessageHandler
from agent.commands import COMMAND_NAMES, PLATFORMS

CONVERSATION = "console"
SPINNER = "|/-\\"
SPIN_EVERY = 0.15  # seconds per frame of the thinking indicator
log = logging.getLogger("safeclaw.agent.console")
# Commands whose first argument is a platform name, which Tab also completes.
PLATFORM_FIRST = ("/post", "/notifications", "/reply", "/like", "/delete")


def completions(before: list[str], word: str) -> list[str]:
    """What Tab may complete `word` to, given the words typed before it on the line."""
    if not before:
        return [f"/{name}" for name in COMMAND_NAMES if f"/{name}".startswith(word or "/")]
    if len(before) == 1 and before[0].lower() in PLATFORM_FIRST:
        return [name for name in PLATFORMS if name.startswith(word.lower())]
    return []


def enable_tab_completion() -> None:
    """Tab completes slash commands (and platform names) at the interactive prompt."""
    try:
        import readline
    except ImportError:  # a Python built without readline: typing still works, Tab does not
        return
    found: list[str] = []

    def complete(word: str, state: int) -> str | None:
        if state == 0:
            line = readline.get_line_buffer()
            # Python's readline appends nothing to a completion: the space is ours.
            found[:] = [f"{match} " for match in completions(line[: readline.get_begidx()].split(), word)]
        return found[state] if state < len(found) else None

    readline.set_completer_delims(" \t\n")
    readline.set_completer(complete)
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")


class ConsoleChannel(BaseChannel):
    name = "console"

    def __init__(
        self,
        handle: MessageHandler,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        super().__init__(handle)
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        reconfigure = getattr(self.stdin, "reconfigure", None)
        if reconfigure is not None:
            # A byte that is not UTF-8 (or a C locale's surrogate escape) becomes U+FFFD instead
            # of killing the reader thread, which would leave the agent waiting forever.
            reconfigure(errors="replace")
        self.interactive = self.stdin.isatty() and self.stdout.isatty()
        self.indicator = self.interactive and self.stderr.isatty()
        self._answered = threading.Event()  # on a terminal: the prompt waits for the reply
        self._stopped = asyncio.Event()

    def _read_line(self) -> str | None:
        try:
            if self.interactive:
                return input("you> ")
            line = self.stdin.readline()
            return line if line else None
        except EOFError:
            return None
        except (OSError, ValueError) as exc:  # stdin closed or broken: that is the end of input
            log.warning("console input ended: %s", exc)
            return None

    async def start(self) -> None:
        if self.interactive:
            enable_tab_completion()
            self._write(
                "SafeClaw is listening. /help lists the commands (Tab completes them). "
                "Ctrl-D or Ctrl-C to leave.\n"
            )
        lines = self._lines_from_a_daemon_thread()
        while not self._stopped.is_set():
            line = await lines.get()
            if line is None:
                break
            text = line.strip()
            if not text:
                self._answered.set()
                continue
            reply = await self._answer(text)
            await self.send(CONVERSATION, reply)
            self._answered.set()
        if self.interactive:
            self._write("\nBye.\n")

    def _lines_from_a_daemon_thread(self) -> asyncio.Queue[str | None]:
        """Read stdin on a daemon thread: a blocked read must never keep the process from
        exiting on a signal (an executor thread would, as asyncio.run waits for those)."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def read_all() -> None:
            while True:
                if self.interactive:  # the next prompt only once the last line is answered
                    self._answered.wait()
                    self._answered.clear()
                line = self._read_line()
                try:
                    loop.call_soon_threadsafe(lines.put_nowait, line)
                except RuntimeError:  # the event loop is closed: the agent is stopping
                    return
                if line is None:
                    return

        self._answered.set()
        threading.Thread(target=read_all, name="console-stdin", daemon=True).start()
        return lines

    async def _answer(self, text: str) -> str:
        """One turn, with the thinking indicator running on a terminal until it is done."""
        if not self.indicator:
            return await self.handle(IncomingMessage("console", CONVERSATION, "owner", text))
        spinner = asyncio.create_task(self._spin())
        try:
            return await self.handle(IncomingMessage("console", CONVERSATION, "owner", text))
        finally:
            spinner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await spinner
            self._indicate("\r\x1b[K")  # erase it: the reply starts on a clean line

    async def _spin(self) -> None:
        for frame in itertools.cycle(SPINNER):
            self._indicate(f"\r{frame} thinking…")
            await asyncio.sleep(SPIN_EVERY)

    def _indicate(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.write(text)
            self.stderr.flush()

    async def stop(self) -> None:
        self._stopped.set()

    async def progress(self, conversation: str, text: str) -> None:
        """Progress goes beside the replies at a terminal; from a pipe, to stderr, so stdout keeps
        nothing but replies."""
        if self.interactive:
            self._write(f"  … {text}\n")
        else:
            sys.stderr.write(f"… {text}\n")
            sys.stderr.flush()

    async def send(self, conversation: str, text: str) -> None:
        self._write(f"safeclaw> {text}\n" if self.interactive else f"{text}\n")

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()
