"""The audit log is written before the effect, whole: a write's line is durable before the write
runs, and a write whose line cannot be written is refused `audit_unavailable`; a short write is
finished or cut back to the last whole line, so the log verifies again once the disk has room.
The disk is a real small tmpfs filled to the last byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from router.audit.chain_check import verify_directory
from router.audit.lines import chain_files
from router.audit.log import AuditLog, AuditUnavailable
from router.audit.verify import OK, verify
from tests.router.router_helpers import WorkerThread, note_lines, push, reply_of, settings_for
from tests.support.small_disk import small_disk

KEY = bytes(range(32))


@pytest.fixture
def disk(tmp_path):
    with small_disk(tmp_path / "disk", "256k") as mounted:
        if isinstance(mounted, str):
            pytest.skip(mounted)
        yield mounted


def leave_free(disk, pages: int) -> None:
    """Fill the disk, then give back `pages` pages at the filler's end."""
    disk.fill()
    size = disk.filler.stat().st_size
    os.truncate(disk.filler, max(0, size - pages * 4096))


def test_a_short_write_is_finished_or_cut_back_and_the_log_verifies_once_space_returns(disk):
    log = AuditLog(disk.root / "audit", "r1", key=KEY, sync_seconds=None)
    log.append({"command_id": "before", "text": "x" * 100}, durable=True)
    leave_free(disk, 1)
    failures = 0
    for i in range(40):  # lines of ~1.2 KB: one of them straddles the last free byte
        try:
            log.append({"command_id": f"c{i}", "text": "y" * 1200})
        except OSError:
            failures += 1
    assert failures > 0
    disk.free()
    log.append({"command_id": "after", "text": "room again"}, durable=True)
    log.close()
    verdict = verify_directory(disk.root / "audit")
    assert verdict.ok, verdict.problem
    raw = b"".join(path.read_bytes() for path in chain_files(disk.root / "audit", "r1"))
    assert raw.endswith(b"\n") and all(json.loads(line) for line in raw.splitlines())
    assert json.loads(raw.splitlines()[-1])["command_id"] == "after"
    assert verify(disk.root / "audit", KEY, None).exit_code == OK


def test_a_durable_line_that_cannot_be_written_raises_audit_unavailable(disk):
    log = AuditLog(disk.root / "audit", "r1", key=KEY, sync_seconds=None)
    disk.fill()
    with pytest.raises(AuditUnavailable):
        log.append({"command_id": "c1", "text": "z" * 3000}, durable=True)
    head = (log.seq, log.last_hash)
    disk.free()
    log.append({"command_id": "c2"}, durable=True)
    log.close()
    assert log.seq == head[0] + 1
    assert verify(disk.root / "audit", KEY, None).exit_code == OK


def fill_the_last_page(audit_log) -> None:
    """Audit lines until the file's last page takes no more (a full disk still has its tail)."""
    for i in range(100):
        try:
            audit_log.append({"event": "filler", "n": i, "text": "f" * 200})
        except OSError:
            return
    raise AssertionError("the disk never filled")


def test_no_write_runs_without_its_durable_audit_line(redis_urls, admin, tmp_path, disk):
    keys = redis_urls.keys
    data = tmp_path / "data"
    settings = settings_for(redis_urls.router_url, data, ROUTER_AUDIT_DIR=str(disk.root / "audit"))
    with WorkerThread(settings) as worker:
        first = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "before the disk filled"}))
        assert first["status"] == "ok", first
        worker.audit.log.sync()
        disk.fill()
        fill_the_last_page(worker.audit.log)
        refused = [reply_of(admin, keys, push(admin, keys, "NOTE", {"text": f"while full {i}"}))
                   for i in range(4)]
        ping = reply_of(admin, keys, push(admin, keys, "PING", {}))
        disk.free()
        last = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "room again"}))
    assert [r["status"] for r in refused] == ["error"] * 4, refused
    assert {r["error"] for r in refused} == {"audit_unavailable"}
    assert ping["status"] == "ok" and last["status"] == "ok"
    assert [n["text"] for n in note_lines(data)] == ["before the disk filled", "room again"]
    records = [json.loads(line) for path in chain_files(disk.root / "audit", "r1")
               for line in path.read_bytes().splitlines()]
    ran = {r["command_id"] for r in records if r.get("status") == "started"}
    assert {first["id"], last["id"]} <= ran  # each write that ran has its line from before it ran
    key = Path(settings.audit_key_file).read_text().strip()
    assert verify(disk.root / "audit", bytes.fromhex(key), None).exit_code == OK
