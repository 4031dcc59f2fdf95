"""A Ctrl-C at any instant of a SafeClaw program's start leaves it quietly.

`./safeclaw` starts Python with SIGINT blocked, so a Ctrl-C during Python's own start (while it sets
up its standard streams it can only die with "Fatal Python error") waits, pending. The first act of
each entry point is `leave_on_ctrl_c()`: from there a Ctrl-C, the one that waited included, ends the
program at once with a new line on stderr (the shell's prompt is not glued to `^C`), exit status
130 and no traceback. Nothing has started that early; a write in hand is one of `write_atomically`'s,
which removes its temp file. Once the program has its own way to stop (the stack's runner, the
router's worker, the console) that replaces it; `python_takes_ctrl_c()` instead gives Python's
KeyboardInterrupt back. A SIGINT ignored when the program started (nohup, the agent the stack keeps
away from Ctrl-C until its console is up) stays ignored. `stop_signals()` are what stops the
long-running ones in order: Ctrl-C, SIGTERM and a closed terminal.

Standard library only: it runs before any of SafeClaw's packages can be imported.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType, TracebackType

INTERRUPTED = 130  # the shell's status for a program ended by Ctrl-C (128 + SIGINT)


def interrupted() -> int:
    """The status of a program a Ctrl-C ended, after a new line on stderr: the shell's prompt then
    starts a line of its own instead of following `^C`. Another Ctrl-C from here (mashed keys, while
    Python winds down and runs no handler) ends the process by the signal: the shell ends that line."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no stderr, or a closed terminal
        sys.stderr.write("\n")
        sys.stderr.flush()
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    return INTERRUPTED


_leaving = False


def _leave(_signum: int, _frame: FrameType | None) -> None:
    global _leaving
    _leaving = True
    raise SystemExit(interrupted())


def leaving() -> bool:
    """True once a Ctrl-C is ending the program: a catch-all around one item (the router's
    containment of whatever a skill raises) lets this SystemExit through, never takes it for the
    item's failure."""
    return _leaving


def _quiet_when_leaving(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    """The Ctrl-C's SystemExit can surface wrapped: Python 3.11 turns an exception raised in a
    class's `__set_name__` (every dataclass field, while a module is imported) into RuntimeError.
    Once leaving, such an error is the Ctrl-C's: the program ends with 130, no traceback."""
    if _leaving and isinstance(error.__cause__ or error.__context__, SystemExit):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(INTERRUPTED)
    sys.__excepthook__(kind, error, trace)


def _terminated(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def leave_on_ctrl_c() -> None:
    """The entry point's first act: a Ctrl-C from now on (or one pending since Python started)
    ends the program quietly with status 130, and a SIGTERM (a stack stopping while this program
    starts) with 143 the same way: as an exception, so a write in hand removes its temp file
    instead of dying with it on the disk."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _leave)
        sys.excepthook = _quiet_when_leaving
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def python_takes_ctrl_c() -> None:
    """From now on a Ctrl-C raises KeyboardInterrupt, as in any Python program (asyncio's runner
    then takes it too), and a SIGTERM does what it does to one; a SIGINT ignored at the start stays
    ignored."""
    if signal.getsignal(signal.SIGINT) is _leave:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is _terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def hold_ctrl_c_across_exec() -> None:
    """Before replacing this process with another Python program of SafeClaw: a Ctrl-C during its
    start waits for its first act instead of crashing it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def stop_signals() -> list[signal.Signals]:
    """What stops a long-running program of SafeClaw in order (the stack's runner, the agent): Ctrl-C,
    SIGTERM and a closed terminal (SIGHUP), unless SIGHUP was ignored when it started (nohup: it
    runs on)."""
    hangup = [] if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else [signal.SIGHUP]
    return [signal.SIGINT, signal.SIGTERM, *hangup]
