"""The router's audit log writer: one JSON line per command, each chained to the one before it.

The line format and where a chain's files are: `router.audit.lines`; checking a chain from its files:
`router.audit.chain_check`. Editing a byte, inserting, deleting or reordering a line breaks the chain
where it happened, and `verify` names that line. Rotation keeps the chain: the active file `<name>.jsonl`
is renamed `<name>.<last seq>.jsonl` and the new file goes on from the old one's last hash and seq.

One writer per file: each router writes its own `<router id>.jsonl`. The last line of a file
is covered once the next one is written (and by the copy in the Redis audit stream).

Durability is a group commit (`AuditLog.sync`), and the durable head is checkpointed under a key
(`router.audit.checkpoint`); `router.audit.verify` checks the files, the checkpoints and the Redis
copy: `python -m router.audit verify [DIR]`. A line that must be durable before an effect runs is
appended with `durable=True`, which raises `AuditUnavailable` when it cannot be had (and, once a
flush has failed, until the router restarts: the kernel may have dropped what it had taken);
durable lines appended together (lanes of different platforms) share one flush of the disk.

A line is whole or absent: a short write is finished, and a write that fails midway (a full disk)
is cut back to the end of the last whole line, so the next line never lands on a fragment and the
log verifies again once the disk has room.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from protocol.atomic_file import sync_folder_of
from router.audit import checkpoint as audit_checkpoint
from router.audit import lines as line_format
from router.audit.chain_check import hash_at
from router.audit.lines import GENESIS, chain_files

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_SYNC_SECONDS = 0.1  # group commit: fsync (and checkpoint) at most this long after a write
log = logging.getLogger("safeclaw.router.audit")
# The data and the size reach the disk (all a line needs); the file's times wait for the next fsync.
_datasync = getattr(os, "fdatasync", os.fsync)


class AuditUnavailable(OSError):
    """A line that had to be durable could not be written (a full disk, a failing fsync): the
    effect it was to precede must not run."""


class AuditLog:
    """Appends chained records to `<directory>/<name>.jsonl`, rotating past `max_bytes`.

    Group commit: each record reaches the OS with one write() before `append` returns (a router
    crash loses nothing); a background thread fsyncs every `sync_seconds` when something was
    written, then checkpoints the durable head (`router.audit.checkpoint`) under `key`. A crash
    of the machine loses at most the lines of the last `sync_seconds` plus one fsync. `durable`
    on `append` (or `sync()`) makes a line durable at once."""

    def __init__(
        self,
        directory: Path,
        name: str,
        max_bytes: int = DEFAULT_MAX_BYTES,
        key: bytes | None = None,
        sync_seconds: float | None = DEFAULT_SYNC_SECONDS,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            raise ValueError(f"audit log name {name!r}: letters, digits, '_', '.', '-' only")
        self.directory = directory
        self.name = name
        self.max_bytes = max_bytes
        self.key = key
        self.path = directory / f"{name}.jsonl"
        self._lock = threading.Lock()  # appends and rotation
        self._sync_lock = threading.Lock()  # one fsync + checkpoint at a time
        self._fd: int | None = None
        self._bytes = 0  # the active file's size while it is open (one writer per file)
        self._cut_to: int | None = None  # a failed write's fragment still to cut off
        self._written = 0  # appends so far; `_synced` is how many of them are durable
        self._synced = 0
        self._checkpointed = -1
        self._flush_failed: OSError | None = None
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.seq, self.last_hash = self._resume()
        if key is not None:
            self._check_checkpoint(key)
            self._enrol(key)
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None
        if sync_seconds:
            self._flusher = threading.Thread(
                target=self._flush_every, args=(sync_seconds,), name=f"audit-sync-{name}", daemon=True
            )
            self._flusher.start()

    def _resume(self) -> tuple[int, str]:
        """The seq and hash to go on from: the active file's last line, else the newest rotated one."""
        for path in reversed(chain_files(self.directory, self.name)):
            last = line_format.last_line(path)
            if last is None:
                continue
            try:
                record = json.loads(last)
                return int(record["seq"]), str(record["hash"])
            except (ValueError, KeyError, TypeError):
                # A torn or edited last line: verify reports it; go on from the line's own hash.
                return 0, hashlib.sha256(last.encode("utf-8", "replace")).hexdigest()
        return 0, GENESIS

    def _check_checkpoint(self, key: bytes) -> None:
        """At start: a checkpoint past the files' end (lines cut off) or that does not seal is
        written into the chain as an `audit_gap` record, so the next checkpoint cannot hide it."""
        try:
            found = audit_checkpoint.read(self.directory, self.name)
        except ValueError as exc:
            problem = str(exc)
        else:
            if found is None:
                return
            if not audit_checkpoint.genuine(found, key, self.name):
                problem = f"the checkpoint (seq {found.seq}) does not seal under the audit key"
            elif found.seq > self.seq:
                problem = (
                    f"{found.seq - self.seq} line(s) missing at the end: the checkpoint holds "
                    f"seq {found.seq}, the files end at seq {self.seq}"
                )
            elif hash_at(self.directory, self.name, found.seq) != found.digest:
                problem = (
                    f"the files were rewritten at or before seq {found.seq} (the checkpoint's hash differs)"
                )
            else:
                self._checkpointed = found.seq
                return
        log.error("audit log %s: %s", self.name, problem)
        self.append({"event": "audit_gap", "problem": problem}, durable=True)

    def _enrol(self, key: bytes) -> None:
        """This chain in the folder's sealed list of chains (`router.audit.checkpoint.enrol`); a
        list found forged or damaged is written into the chain as an `audit_gap`."""
        def sealed(name: str) -> bool:
            with contextlib.suppress(ValueError):
                found = audit_checkpoint.read(self.directory, name)
                return found is not None and audit_checkpoint.genuine(found, key, name)
            return False

        try:
            names = line_format.chain_names(self.directory)
            problem = audit_checkpoint.enrol(self.directory, self.name, key, [n for n in names if sealed(n)])
        except OSError as exc:
            log.error("audit log %s: cannot add it to the sealed list of chains yet: %s", self.name, exc)
            return
        if problem is not None:
            log.error("audit log %s: %s", self.name, problem)
            self.append({"event": "audit_gap", "problem": problem}, durable=True)

    def append(self, entry: dict[str, Any], durable: bool = False) -> dict[str, Any]:
        """Write one record (entry + seq, ts, prev, hash) and return it. `durable`: fsync it now.
        Raises OSError when the line could not be written (nothing of it stays in the file), and
        with `durable` AuditUnavailable when it could not be written or made durable."""
        return self._append(entry, durable)[0]

    def append_line(self, entry: dict[str, Any], durable: bool = False) -> tuple[dict[str, Any], str]:
        """`append`, also returning the line as written (its canonical JSON, no newline)."""
        record, data = self._append(entry, durable)
        return record, data[:-1].decode("utf-8")

    def _append(self, entry: dict[str, Any], durable: bool) -> tuple[dict[str, Any], bytes]:
        try:
            with self._lock:
                if self._fd is None:
                    self._open()
                if self._bytes >= self.max_bytes:
                    self._rotate()
                    self._open()
                seq = self.seq + 1
                record = entry.copy()  # cheaper than a literal that copies, then grows
                record["seq"] = seq
                record["prev"] = self.last_hash
                if "ts" not in record:
                    record["ts"] = time.time()
                data = line_format.seal(record, entry)
                assert self._fd is not None
                done = os.write(self._fd, data) if self._cut_to is None else 0  # raising: nothing written
                if done == len(data):
                    self._bytes += done
                else:
                    self._write_rest(data, done)
                self.seq, self.last_hash = seq, record["hash"]
                self._written += 1
                number = self._written
            if durable:  # the line durable now; its checkpoint comes with the next group commit
                self._durable(number)
        except OSError as exc:
            if durable and not isinstance(exc, AuditUnavailable):
                raise AuditUnavailable(exc.errno or errno.EIO, f"audit log {self.path}: {exc}") from exc
            raise
        return record, data

    def _open(self) -> None:
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._bytes = os.fstat(self._fd).st_size

    def _write_rest(self, data: bytes, done: int) -> None:
        """Write the rest of `data` after its first `done` bytes at the file's end (an O_APPEND
        file; a short write, or a first write held back by a fragment still to cut off); on an
        error, cut the file back to where it was before the line and raise."""
        assert self._fd is not None
        if self._cut_to is not None:  # an earlier fragment that could not be cut off yet
            os.ftruncate(self._fd, self._cut_to)
            self._bytes, self._cut_to = self._cut_to, None
        start = self._bytes
        try:
            view = memoryview(data)
            while done < len(data):
                written = os.write(self._fd, view[done:])
                if written <= 0:
                    raise OSError(errno.EIO, "the audit file took no bytes")
                done += written
        except OSError:
            if done:
                self._cut_to = start
                try:
                    os.ftruncate(self._fd, start)
                    self._cut_to = None
                except OSError as cut:
                    log.error("audit log %s: cannot cut a torn line off yet (%s)", self.name, cut)
            raise
        self._bytes = start + done

    def sync(self, checkpoint: bool = True) -> None:
        """fsync what was written, then (with `checkpoint`) checkpoint that head; no-op when
        nothing is new. Without a key, or with `checkpoint` False, the head is checkpointed by a
        later sync (the group commit's, or `close`)."""
        with self._sync_lock:
            self._sync_locked(checkpoint)

    def _durable(self, number: int) -> None:
        """Line `number` on the disk: at once when a flush that began after it was written has
        already ended (a line appended beside it made it durable), else by a flush of its own that
        also covers every line written meanwhile (one flush for the lines of several lanes)."""
        with self._sync_lock:
            if self._synced < number:
                self._sync_locked(checkpoint=False)

    def _sync_locked(self, checkpoint: bool) -> None:
        if self._flush_failed is not None:  # the kernel may have dropped the pages it had taken
            raise AuditUnavailable(errno.EIO, f"audit log {self.path}: a flush failed earlier "
                                   f"({self._flush_failed}); no line is durable until the router restarts")
        with self._lock:
            if self._fd is None:
                return
            fd, written, head = os.dup(self._fd), self._written, (self.seq, self.last_hash)
        try:
            if written != self._synced:
                _datasync(fd)  # outside the append lock: appends go on while the disk works
        except OSError as exc:
            self._flush_failed = exc  # a later flush that succeeds vouches for nothing before it
            raise
        finally:
            os.close(fd)
        self._synced = written
        if checkpoint and self.key is not None and head[0] > self._checkpointed:
            audit_checkpoint.write(self.directory, self.name, head[0], head[1], self.key)
            self._checkpointed = head[0]

    def _flush_every(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            try:
                self.sync()
            except OSError as exc:
                log.error("audit log %s: fsync or checkpoint failed: %s", self.name, exc)

    def close(self) -> None:
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join(timeout=5)
        try:
            self.sync()
        finally:
            with self._lock:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None

    def _rotate(self) -> None:
        if self._fd is not None and self._cut_to is not None:
            os.ftruncate(self._fd, self._cut_to)
            self._cut_to = None
        if self._fd is not None:  # the old file is durable before it is renamed
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
        target = self.directory / f"{self.name}.{self.seq:012d}.jsonl"
        os.replace(self.path, target)
        sync_folder_of(self.directory)
