"""A real small disk for tests: a tmpfs of a few hundred KB mounted in the test's tmp dir (needs root
and mount rights; the fixtures skip with the reason otherwise)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path


class SmallDisk:
    def __init__(self, mountpoint: Path) -> None:
        self.root = mountpoint
        self.filler = mountpoint / "filler.bin"

    def fill(self) -> None:
        """Write until the disk says ENOSPC, in ever smaller pieces: then no write succeeds."""
        with self.filler.open("ab", buffering=0) as handle:
            for size in (65536, 4096, 512, 1):
                try:
                    while True:
                        handle.write(b"\0" * size)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


def mount_tmpfs(mountpoint: Path, size: str, read_only: bool = False) -> str | None:
    """Mount a tmpfs at `mountpoint`; None on success, else why it could not be mounted."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return "mounting a small tmpfs needs root"
    mountpoint.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)],
                          capture_output=True, text=True, timeout=30)
    return None if done.returncode == 0 else f"mount failed: {done.stderr.strip()}"


def unmount(mountpoint: Path) -> None:
    subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, timeout=30)


@contextlib.contextmanager
def small_disk(mountpoint: Path, size: str = "512k") -> Iterator[SmallDisk | str]:
    """A SmallDisk, or the reason (str) when none can be mounted here."""
    problem = mount_tmpfs(mountpoint, size)
    if problem:
        yield problem
        return
    try:
        yield SmallDisk(mountpoint)
    finally:
        unmount(mountpoint)
