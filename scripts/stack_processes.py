"""The processes `./safeclaw` starts, and how each is stopped: by its own pid, in reverse order
(SIGTERM, a bounded wait, then SIGKILL); each child also gets SIGTERM if the runner dies first.
One stack a run folder (a lock), and the runner's messages on stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import IO, Any

from agent.channels.display import showable, terminal_width, wrapped
from protocol.atomic_file import write_atomically
from protocol.ctrl_c import INTERRUPTED

REPO_ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 10.0  # SIGTERM, then this long, then SIGKILL


class StackError(Exception):
    """The stack cannot start; the message says what to do."""


def shown_path(path: Path | str) -> str:
    """A path as a message shows it: from SafeClaw's folder when inside it (where ./safeclaw runs),
    short enough for a narrow terminal; else in full."""
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except (ValueError, OSError):
        return str(path)


def say(text: str) -> None:
    line = wrapped(f"safeclaw: {text}", terminal_width(sys.stderr), hang="  ")
    with contextlib.suppress(OSError, ValueError):  # a closed terminal: the stack still stops in order
        print(showable(line, sys.stderr), file=sys.stderr, flush=True)


def die_with_parent() -> None:
    """In the child: get SIGTERM if this runner dies without stopping us (Linux prctl)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def dashboard_child_setup() -> None:
    """In the dashboard's process: it starts at a lower priority, so on a small machine the router
    and the agent (the way to the console's prompt) get the cores first."""
    die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(10)


def agent_child_setup() -> None:
    """In the agent's process: a Ctrl-C while Python itself starts would end in a traceback, so the
    agent starts with SIGINT ignored; its console takes Ctrl-C once it is up (and until then this
    runner stops it by SIGTERM)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Stack:
    """The processes this run started, stopped in reverse order by their own pids."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.children: dict[str, subprocess.Popen[Any]] = {}
        self.interrupted = False

    def record(self, name: str, process: subprocess.Popen[Any]) -> None:
        self.children[name] = process
        pids = {n: p.pid for n, p in self.children.items()}
        data = (json.dumps(pids) + "\n").encode()
        write_atomically(self.run_dir / "pids.json", data, durable=False, mode=0o644)

    def stop(self, name: str) -> None:
        process = self.children.get(name)
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            say(f"{name} (pid {process.pid}) did not stop within {STOP_SECONDS:.0f}s; killing it")
            process.kill()
            process.wait(timeout=STOP_SECONDS)

    def stop_all(self) -> None:
        for name in reversed(list(self.children)):
            self.stop(name)


def run_in_foreground(command: list[str], **popen: Any) -> int:
    """Run one of SafeClaw's programs on this terminal and wait for it, as a shell runs a command:
    it starts with SIGINT blocked (its first act takes it, protocol/ctrl_c.py), a Ctrl-C is its to
    answer, and this process waits for its status (130 when it died of the Ctrl-C)."""
    def wait_on(_signum: int, _frame: FrameType | None) -> None:
        pass  # the child answers the Ctrl-C; its status is the answer

    keep_ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    previous = signal.getsignal(signal.SIGINT) if keep_ignored else signal.signal(signal.SIGINT, wait_on)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        child = subprocess.Popen(command, **popen)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    try:
        code = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return INTERRUPTED if code == -signal.SIGINT else code


def lock_run_dir(run_dir: Path) -> IO[str]:
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle = (run_dir / "stack.lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StackError(f"SafeClaw is already running (in another terminal) with {shown_path(run_dir)}: use "
                         "that one (./safeclaw status looks at it) or leave it with Ctrl-D there; a second "
                         "one needs its own folder (SAFECLAW_RUN_DIR)") from None
    return handle
