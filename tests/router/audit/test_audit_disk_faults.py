"""The audit log against a disk that fails at every byte offset of a line: full (ENOSPC) or
broken (EIO), with the cut-back of a torn line failing too, for plain and durable lines. The
failing append raises (a durable one `AuditUnavailable`: no write runs without its line), nothing
of it is left in the file once the disk works again, and the chain verifies. The disk's faults
are injected into the log's own system calls; `test_audit_before_effect` fills a real tmpfs."""

from __future__ import annotations

import errno
import json
import os

import pytest

import router.audit.log as audit_log
from router.audit.log import AuditLog, AuditUnavailable
from router.audit.verify import OK, verify

KEY = bytes(range(32))
BEFORE = {"command_id": "before", "text": "x" * 50, "ts": 1.5}
TORN = {"command_id": "torn", "text": "y" * 300, "ts": 2.5}  # fixed times: one length in every log


class FailingDisk:
    """Takes `room` more bytes, then fails every write with `error`; None: a working disk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.room: int | None = None
        self.error = errno.ENOSPC
        self.cut_fails = False
        self._write, self._truncate = os.write, os.ftruncate
        monkeypatch.setattr(audit_log.os, "write", self.write)
        monkeypatch.setattr(audit_log.os, "ftruncate", self.truncate)

    def write(self, fd: int, data) -> int:
        if self.room is None:
            return self._write(fd, data)
        if self.room <= 0:
            raise OSError(self.error, os.strerror(self.error))
        taken = self._write(fd, bytes(data[: self.room]))
        self.room -= taken
        return taken

    def truncate(self, fd: int, size: int) -> None:
        if self.cut_fails and self.room is not None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        self._truncate(fd, size)


@pytest.mark.slow
@pytest.mark.parametrize("durable", [False, True], ids=["plain", "durable"])
@pytest.mark.parametrize("cut_fails", [False, True], ids=["cut-back-works", "cut-back-fails"])
@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO], ids=["full", "eio"])
def test_a_disk_failing_at_every_byte_of_a_line_leaves_a_chain_that_verifies(
        tmp_path, monkeypatch, error, cut_fails, durable):
    whole = AuditLog(tmp_path / "whole", "r1", key=KEY, sync_seconds=None)
    whole.append(BEFORE)
    line_bytes = len(whole.append_line(TORN)[1]) + 1
    whole.close()
    disk = FailingDisk(monkeypatch)
    for offset in range(line_bytes):  # the disk fails after this many bytes of the line
        folder = tmp_path / f"at-{offset}"
        log = AuditLog(folder, "r1", key=KEY, sync_seconds=None)
        log.append(BEFORE, durable=True)
        disk.room, disk.error, disk.cut_fails = offset, error, cut_fails
        with pytest.raises(AuditUnavailable if durable else OSError):
            log.append(TORN, durable=durable)
        with pytest.raises(OSError):  # still failing: the next line too
            log.append({"command_id": "next", "text": "z"}, durable=durable)
        disk.room = None
        log.append({"command_id": "after", "text": "room again"}, durable=True)
        log.close()
        raw = (folder / "r1.jsonl").read_bytes()
        assert [json.loads(line)["command_id"] for line in raw.splitlines()] == ["before", "after"], offset
        assert verify(folder, KEY, None).exit_code == OK, offset


def test_after_a_failed_flush_no_line_is_called_durable_until_a_restart(tmp_path, monkeypatch):
    """A failed fsync may have dropped pages the kernel had taken (and marked clean): a later fsync
    that succeeds vouches for nothing written before it. So once one fails, every durable append
    is refused (no write runs on it) until the router starts again, whatever the disk says then."""
    log = AuditLog(tmp_path, "r1", key=KEY, sync_seconds=None)
    log.append(BEFORE, durable=True)
    real = audit_log._datasync
    calls = []

    def failing_once(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(audit_log, "_datasync", failing_once)
    with pytest.raises(AuditUnavailable):
        log.append({"command_id": "first", "text": "lost?"}, durable=True)
    for attempt in range(3):  # the disk works again; the log does not pretend it did all along
        with pytest.raises(AuditUnavailable, match="restarts"):
            log.append({"command_id": f"again-{attempt}", "text": "z"}, durable=True)
    log.append({"command_id": "plain", "text": "no promise made"})  # a plain line is still written
    assert len(calls) == 1
    with pytest.raises(AuditUnavailable):
        log.sync()  # no checkpoint vouches for the lines either
    monkeypatch.setattr(audit_log, "_datasync", real)
    restarted = AuditLog(tmp_path, "r1", key=KEY, sync_seconds=None)  # the next start
    restarted.append({"command_id": "after-restart"}, durable=True)
    restarted.close()
    assert verify(tmp_path, KEY, None).exit_code == OK
