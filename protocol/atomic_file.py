"""Writing a file so that a reader (or the next start, after a crash) sees the old content or the new
one, never a torn one: a temp file beside it, renamed over it. The one way every process writes a
file in place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(
    path: Path, data: bytes, durable: bool = True, mode: int = 0o600, sync_folder: bool = False
) -> None:
    """`durable`: the data is on the disk before the rename (state; a cache a crash may lose needs no
    fsync). `sync_folder`: the rename too (what must survive a power cut, like a checkpoint). The temp
    file is `.<name>.<random>.tmp`, removed when the write fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_folder:
        sync_folder_of(path.parent)


def sync_folder_of(folder: Path) -> None:
    """Make a rename in `folder` durable, where the OS allows it (a folder's fsync)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
