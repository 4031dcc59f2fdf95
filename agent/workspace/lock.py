"""One agent per workspace: an exclusive lock on `workspace/.agent.lock` for the process's life.

Two agents on one workspace lost memory writes (each rewrote the file from what it had read) and
both acted in one autonomy cycle. The lock is an `flock` the kernel drops when the process ends,
however it ends, so a crash never leaves a stale lock; the file names the holder's pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import IO

from agent.errors import AgentError

LOCK_FILE = ".agent.lock"


class WorkspaceBusy(AgentError):
    """Another process holds the workspace."""

    def __init__(self, root: Path, pid: int | None) -> None:
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"another SafeClaw agent ({who}) is running on the workspace {root}; stop it first, "
            "or give this one its own SAFECLAW_WORKSPACE"
        )


class WorkspaceLock:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LOCK_FILE
        self._handle: IO[str] | None = None

    def acquire(self) -> WorkspaceLock:
        """Hold the lock, or raise WorkspaceBusy naming the holder; never waits."""
        self.root.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise WorkspaceBusy(self.root, self.holder()) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return self

    def holder(self) -> int | None:
        """The pid written by the process that holds (or last held) the lock."""
        with contextlib.suppress(OSError, ValueError):
            return int(self.path.read_text(encoding="utf-8").split()[0])
        return None

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
