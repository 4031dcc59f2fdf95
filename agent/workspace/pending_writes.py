"""State files that could not be written yet: kept in memory, written as soon as the disk allows.

A full disk (or a read-only one) must neither lose what the owner wrote nor be hidden: the
workspace writes every state file through `PendingWrites.write`, which keeps the newest content
of a file it could not write, raises `NotSavedError` saying why and where, and tries again on
`flush()` (each turn, and every few seconds while the agent runs). Reads see the pending content.
"""

from __future__ import annotations

import copy
import logging
import threading
from pathlib import Path
from typing import Any

from agent.errors import NotSavedError
from agent.workspace.files import write_failure_reason, write_json_atomic

log = logging.getLogger("safeclaw.agent.workspace")


class PendingWrites:
    def __init__(self) -> None:
        self._content: dict[Path, Any] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._content)

    def get(self, path: Path) -> Any | None:
        """The content waiting to be written to `path` (a copy), or None."""
        with self._lock:
            return copy.deepcopy(self._content[path]) if path in self._content else None

    def has(self, path: Path) -> bool:
        return path in self._content

    def paths(self) -> list[Path]:
        with self._lock:
            return list(self._content)

    def write(self, path: Path, data: Any, durable: bool = True) -> None:
        """Write `data` to `path` atomically; if that fails, keep it and raise NotSavedError.
        `durable=False`: no fsync, for a change a power cut may undo harmlessly."""
        with self._lock:
            try:
                self._write_locked(path, data, durable)
            except NotSavedError:
                self._content[path] = copy.deepcopy(data)  # only what must wait is copied
                raise

    def forget(self, path: Path) -> None:
        with self._lock:
            self._content.pop(path, None)

    def forget_under(self, folder: Path) -> None:
        with self._lock:
            for path in [p for p in self._content if p.is_relative_to(folder)]:
                del self._content[path]

    def flush(self) -> list[Path]:
        """Try every file still waiting; returns the ones written now."""
        written = []
        with self._lock:
            for path in list(self._content):
                try:
                    self._write_locked(path, self._content[path])
                except NotSavedError:
                    continue
                written.append(path)
        if written:
            log.warning(
                "wrote %d state file(s) kept in memory: %s", len(written), ", ".join(map(str, written))
            )
        return written

    def _write_locked(self, path: Path, data: Any, durable: bool = True) -> None:
        try:
            write_json_atomic(path, data, durable)
        except OSError as exc:
            reason = write_failure_reason(exc)
            log.error("cannot write %s (%s); kept in memory until it can be written", path, reason)
            raise NotSavedError(path, reason) from None
        self._content.pop(path, None)  # written: whatever waited for this file is older
