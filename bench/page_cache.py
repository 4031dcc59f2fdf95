"""A file out of the page cache, for a cold start: fsync it, then POSIX_FADV_DONTNEED, and how
much of it the cache still holds (mincore over a mapping of it).

The kernel drops only clean pages no process has mapped: a model another process has loaded
stays cached, and `resident_share` after the drop says so. Linux only (mincore through libc).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from pathlib import Path

_PROT_READ, _MAP_SHARED = 0x1, 0x01
_MAP_FAILED = ctypes.c_void_p(-1).value


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
    return libc


def resident_share(path: Path) -> float | None:
    """The share of `path`'s pages in the page cache (0 to 1), or None when it cannot be told."""
    size = path.stat().st_size
    if size == 0:
        return 0.0
    try:
        libc = _libc()
    except OSError:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, _PROT_READ, _MAP_SHARED, fd, 0)
        if address in (None, _MAP_FAILED):
            return None
        try:
            pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            vector = (ctypes.c_ubyte * pages)()
            if libc.mincore(ctypes.c_void_p(address), size, vector) != 0:
                return None
            return sum(byte & 1 for byte in bytes(vector)) / pages
        finally:
            libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)


def drop_from_page_cache(path: Path) -> dict[str, float | None]:
    """fsync `path` (so that no dirty page stays), advise the kernel it is not needed; the share of
    it cached before and after."""
    before = resident_share(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return {"cached_before": before, "cached_after": resident_share(path)}
