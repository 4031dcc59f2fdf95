"""Files of the workspace: atomic writes, strict reads, and the leftovers of a killed write.

Every state file is written atomically (temp file, fsync, rename). A write killed half-way
leaves only its temp file (`.<name>.<random>.tmp`); `remove_stale_temp_files` clears those at
start. `check_writable` turns a read-only or unwritable folder into one clear line.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.errors import StateFileError
from protocol.atomic_file import write_atomically

STALE_TEMP_SECONDS = 60.0  # a temp file this old belongs to no write still running (they take ms)
REASONS = {  # why a write failed, in the owner's words
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


def write_bytes_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never a torn one;
    `durable`: synced to the disk first (state); a cache a crash may lose needs no fsync."""
    write_atomically(path, data, durable)


def write_text_atomic(path: Path, text: str, durable: bool = True) -> None:
    # A lone surrogate (half an emoji in a model's JSON, a surrogate escape from stdin) cannot be
    # UTF-8: it becomes "?" rather than failing the write and the turn with it.
    write_bytes_atomic(path, text.encode("utf-8", errors="replace"), durable)


def write_json_atomic(path: Path, data: Any, durable: bool = True) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n", durable)


def overwrite_in_place(path: Path, text: str) -> None:
    """A file only a person reads (the last prompt): its bytes written over the old ones, then cut
    to length. No temp file, rename or truncation to zero: on ext4 each of those pushes the data
    to disk at once (auto_da_alloc), a cost paid every step. The price: a reader at the wrong
    moment may see the start of one prompt and the end of the one before."""
    data = text.encode("utf-8", errors="replace")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def read_json(path: Path, default: Any, unique_keys: bool = False) -> Any:
    """The parsed file, or `default` when it does not exist. Corrupt → StateFileError; with
    `unique_keys` (a file a person edits, where a key given twice would silently mean its last
    value) so is a key given twice in one object."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise StateFileError(f"cannot read {path}: {exc.strerror}") from None
    return parse_json(path, data, default, unique_keys)


def parse_json(path: Path, data: bytes, default: Any, unique_keys: bool = False) -> Any:
    """`data`, the bytes read from `path`, parsed as `read_json` does."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StateFileError(
            f"{path} is not UTF-8 text (byte {exc.start}). "
            "Fix it by hand or move it away; SafeClaw will not overwrite it."
        ) from None
    if not raw.strip():
        return default
    try:
        return json.loads(raw, object_pairs_hook=_once_each if unique_keys else None)
    except _KeyTwice as exc:
        raise StateFileError(
            f"{path}: {exc.key!r} is given twice in one object; keep one (nothing is guessed)"
        ) from None
    except json.JSONDecodeError as exc:
        raise StateFileError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Fix it by hand or move it away; SafeClaw will not overwrite it."
        ) from None


class _KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _KeyTwice(key)
        found[key] = value
    return found


def remove_stale_temp_files(folders: list[Path], now: float | None = None) -> list[Path]:
    """Delete the temp files a killed atomic write left behind (older than STALE_TEMP_SECONDS)."""
    now = time.time() if now is None else now
    removed = []
    for folder in folders:
        for path in folder.glob(".*.tmp"):
            try:
                if path.is_file() and now - path.stat().st_mtime > STALE_TEMP_SECONDS:
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue  # gone already, or not ours to remove: leave it
    return removed


def write_failure_reason(exc: OSError) -> str:
    return REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__


def check_writable(folder: Path) -> None:
    """Create and remove a probe file in `folder`; StateFileError with the reason if that fails."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StateFileError(
            f"the workspace folder {folder} is not writable ({write_failure_reason(exc)}): "
            "SafeClaw keeps its history and memory there; make it writable or set SAFECLAW_WORKSPACE"
        ) from None
