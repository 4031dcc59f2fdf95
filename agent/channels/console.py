"""The console channel: a prompt on a terminal; one message per line from a pipe.

From a pipe, stdout carries nothing but replies (logs go to stderr and the log file), and the
channel returns at end of input so the process can exit 0. On a terminal, the next `you>` prompt
appears only after the reply, and a thinking indicator runs on stderr (when stderr is a terminal
too) while the turn works; it is erased before the reply prints on its own line. A notice that
arrives while the owner types is printed above the prompt, and the line being typed is drawn
again below it. Ctrl-C while a reply is under way stops that reply (`stop_reply`) and gives the
prompt back; at the prompt it leaves. However the console ends (Ctrl-D, Ctrl-C, SIGTERM), the
terminal's settings are put back as they were and the last line ends with a newline. Everything
printed goes through `display.for_terminal`: no text can move the cursor, recolour or reorder the
screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import sys
import threading
from typing import TextIO

from agent.channels.base import BaseChannel, IncomingMessage, MessageHandler
from agent.channels.display import (
    TerminalSettings,
    for_terminal,
    showable,
    terminal_width,
    typing_unseen,
    wrapped,
)
from agent.channels.prompt_line import (
    PROMPT,
    enable_tab_completion,
    redraw_input_line,
    take_the_terminal_again,
)

CONVERSATION = "console"
LEAVING_WORDS = ("exit", "quit", "/exit", "/quit")  # at a terminal, as Ctrl-D
ERASE_LINE = "\r\x1b[K"
SPINNER = "|/-\\"
SPIN_EVERY = 0.15  # seconds per frame of the thinking indicator
STOPPED_REPLY = ("Stopped that reply; your message is kept in the history and nothing more is done for it. "
                 "Ctrl-C at the prompt (or Ctrl-D) leaves.")
log = logging.getLogger("safeclaw.agent.console")


class ConsoleChannel(BaseChannel):
    name = "console"

    def __init__(
        self,
        handle: MessageHandler,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        terminal: str = "",
    ) -> None:
        super().__init__(handle)
        self.terminal = terminal  # its TERM
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
        self._reading = False  # the owner is typing at the prompt (a notice goes above it)
        self._turn_running = False  # the thinking indicator may be on the line
        self._said_bye = False
        self._reply: tuple[IncomingMessage, asyncio.Future[str]] | None = None  # the one under way
        self._terminal = TerminalSettings(self.stdin) if self.interactive else None

    def _read_line(self) -> str | None:
        try:
            if self.interactive:
                self._reading = True
                try:
                    return input(PROMPT)
                finally:
                    self._reading = False
            line = self.stdin.readline()
            return line if line else None
        except EOFError:
            return None
        except (OSError, ValueError) as exc:  # stdin closed or broken: that is the end of input
            log.warning("console input ended: %s", exc)
            return None

    async def start(self) -> None:
        if self.interactive:
            enable_tab_completion(self.terminal)
            with contextlib.suppress(NotImplementedError, RuntimeError):  # Ctrl-Z, then `fg`
                asyncio.get_running_loop().add_signal_handler(signal.SIGCONT, self._continued)
            self._show("SafeClaw is listening. /help lists the commands (Tab completes them). "
                       "Ctrl-C stops a reply; Ctrl-C at the prompt, Ctrl-D or quit leaves.")
        lines = self._lines_from_a_daemon_thread()
        while not self._stopped.is_set():
            line = await lines.get()
            if line is None:
                break
            text = line.strip()
            if not text:
                self._answered.set()
                continue
            if self.interactive and text.lower() in LEAVING_WORDS:
                break
            reply = await self._answer(text)
            await self.send(CONVERSATION, reply)
            self._answered.set()
        self._leave()

    def _continued(self) -> None:
        if self._reading:  # during a turn the terminal is the shell's mode already; the spinner goes on
            take_the_terminal_again()

    def _leave(self) -> None:
        """Put the terminal back as it was and end on a line of its own (once)."""
        if not self.interactive or self._said_bye:
            return
        self._said_bye = True
        if self._terminal is not None:
            self._terminal.restore()
        with contextlib.suppress(OSError, ValueError):
            self.stdout.write(ERASE_LINE + "Bye.\n" if self._turn_running else "\nBye.\n")
            self.stdout.flush()

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
            return await self._reply_to(text)
        self._turn_running = True
        spinner = asyncio.create_task(self._spin())
        try:
            with typing_unseen(self.stdin):
                return await self._reply_to(text)
        finally:
            spinner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await spinner
            self._indicate(ERASE_LINE)  # erase it: the reply starts on a clean line
            self._turn_running = False

    async def _reply_to(self, text: str) -> str:
        """The reply, or what the console says when the owner stopped it (`stop_reply`)."""
        message = IncomingMessage("console", CONVERSATION, "owner", text)
        reply = asyncio.ensure_future(self.handle(message))
        self._reply = (message, reply)
        try:
            return await reply
        except asyncio.CancelledError:
            own = asyncio.current_task()
            if not message.stop.is_set() or (own is not None and own.cancelling()):
                raise  # the agent is stopping, not just this reply
            return STOPPED_REPLY
        finally:
            self._reply = None

    def stop_reply(self) -> bool:
        """Ctrl-C at a terminal while a reply is under way: stop that reply (its turn ends at its
        next model call, what the owner wrote stays in the history), not the agent."""
        if not self.interactive or self._reply is None or self._reply[1].done():
            return False
        message, reply = self._reply
        message.stop.set()
        reply.cancel()
        return True

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
        self._leave()

    async def progress(self, conversation: str, text: str) -> None:
        """Progress goes beside the replies at a terminal; from a pipe, to stderr, so stdout keeps
        nothing but replies."""
        if self.interactive:
            self._show(f"  … {text}")
        else:
            sys.stderr.write(f"… {for_terminal(text)}\n")
            sys.stderr.flush()

    async def send(self, conversation: str, text: str) -> None:
        """A reply, or a notice of the agent's own (an approval asked, a command's outcome)."""
        self._show(f"safeclaw> {text}" if self.interactive else text)

    def _show(self, line: str) -> None:
        """One message on a line of its own: above the prompt while the owner types (the typed
        line is drawn again under it), over the thinking indicator while a turn runs."""
        if not self.interactive:
            self._write(line + "\n")
            return
        typing = self._reading
        self._raw(ERASE_LINE if typing or self._turn_running else "")
        self._write(wrapped(line, terminal_width(self.stdout)) + "\n")
        if typing:
            redraw_input_line()

    def _raw(self, escape: str) -> None:
        """The console's own control sequences (never text from anywhere else)."""
        with contextlib.suppress(OSError, ValueError):
            self.stdout.write(escape)
            self.stdout.flush()

    def _write(self, text: str) -> None:
        self.stdout.write(showable(for_terminal(text), self.stdout))
        self.stdout.flush()
