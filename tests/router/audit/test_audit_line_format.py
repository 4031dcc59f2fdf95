"""The audit line sealed from one encoding is byte for byte the canonical line of before (sorted keys,
no spaces, hash over the record without `hash`), whatever the record holds; lines written the old
way verify; durable lines appended together share one flush of the disk, and a failed flush is
never taken for a done one."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import threading
from enum import StrEnum

import pytest

from router.audit import canonical_json
from router.audit import lines as audit_lines
from router.audit import log as audit_log
from router.audit.chain_check import verify_directory
from router.audit.lines import GENESIS, seal, sealed_line
from router.audit.log import AuditLog, AuditUnavailable


def canonical_by_hand(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sealed_by_hand(record):
    body = {k: v for k, v in record.items() if k != "hash"}
    digest = hashlib.sha256(canonical_by_hand(body).encode("utf-8", "replace")).hexdigest()
    return digest, canonical_by_hand({**body, "hash": digest})


class Kind(StrEnum):
    POST = "post"


RECORDS = [
    {"action": "CREATE_POST", "seq": 1, "prev": GENESIS, "ts": 1764127862.123456, "text": "plain"},
    {"seq": 2, "prev": "ab" * 32, "ts": 1.5, "zeta": [1, 2.5, None, True, False]},  # nothing before "hash"
    {"a": 1, "b": "two"},  # "hash" goes last
    {},  # "hash" alone
    {"seq": 3, "prev": GENESIS, "ts": 2.0, "hash": "an old hash that is replaced"},
    {"seq": 4, "origin": {"z": 1, "a": {"nested": "dict", "hash": "a nested hash"}}, "prev": GENESIS},
    {"seq": 5, "text": 'quotes " and \\ and \n newlines, \x00 NUL, é, 漢字, 🦀, \u2028', "prev": GENESIS},
    {"seq": 6, "text": "a lone surrogate \udc80", "prev": GENESIS},
    {"seq": 7, "ts": math.inf, "neg": -math.inf, "nan": math.nan, "tiny": 1e-7, "big": 1e16, "prev": "x"},
    {"seq": 8, "kind": Kind.POST, "n": 10**40, "prev": GENESIS, "empty": {}, "list": []},
    {"seq": 9, "text": '"hash":"' + "0" * 64 + '"', "payload": {"hash": "0" * 64}, "prev": GENESIS},
]


@pytest.mark.parametrize("record", RECORDS)
def test_the_line_sealed_from_one_encoding_is_the_canonical_line(record):
    assert sealed_line(record) == sealed_by_hand(record)


@pytest.mark.parametrize("record", RECORDS)
def test_the_line_sealed_by_the_fast_encoder_is_the_canonical_line(record):
    # "hash" first, last and alone, NaN, a lone surrogate, an enum, a big int: fast or not.
    digest, line = sealed_by_hand(record)
    sealed = dict(record)
    assert seal(sealed) == (line + "\n").encode("utf-8", "replace")
    assert sealed["hash"] == digest


@pytest.mark.parametrize("record", RECORDS[:5])
def test_hash_first_last_and_alone_take_the_fast_path(record):
    assert canonical_json.fast({**record, "hash": audit_lines._MARK}) is not None


def test_a_record_holding_the_marker_itself_is_still_sealed_right():
    # The marker is secret to the process; a record holding it anyway is sealed the slow way.
    marker = audit_lines._MARK
    for record in ({"seq": 1, "text": marker}, {"seq": 1, "payload": {"hash": marker}, "prev": marker},
                   {"a": {"hash": marker}, "seq": 1}, {"seq": 1, "z": [marker]}):
        digest, line = sealed_by_hand(record)
        assert sealed_line(record) == (digest, line)
        sealed = dict(record)
        assert seal(sealed) == (line + "\n").encode("utf-8", "replace") and sealed["hash"] == digest


def test_lines_written_the_old_way_verify_and_the_log_goes_on_from_them(tmp_path):
    prev, text = GENESIS, b""
    for seq in (1, 2, 3):
        digest, line = sealed_by_hand({"command_id": f"c{seq}", "seq": seq, "prev": prev, "ts": 1.0 * seq})
        text += (line + "\n").encode()
        prev = digest
    (tmp_path / "r1.jsonl").write_bytes(text)
    assert verify_directory(tmp_path).ok
    log = AuditLog(tmp_path, "r1", sync_seconds=None)
    record = log.append({"command_id": "c4", "text": "né"})
    log.close()
    assert record["seq"] == 4 and record["prev"] == prev
    written = (tmp_path / "r1.jsonl").read_bytes().splitlines()[-1].decode()
    assert (record["hash"], written) == sealed_by_hand({k: v for k, v in record.items() if k != "hash"})
    assert verify_directory(tmp_path).ok


class GatedFlush:
    """Stands for the disk's flush: counts the flushes and holds each of the first two until let go."""

    def __init__(self, fail_first=False):
        self.calls, self.fail_first = 0, fail_first
        self.started = [threading.Event(), threading.Event()]
        self.let_go = [threading.Event(), threading.Event()]

    def __call__(self, fd):
        self.calls += 1
        if self.calls <= 2:
            self.started[self.calls - 1].set()
            assert self.let_go[self.calls - 1].wait(60)  # a loaded machine may stall the test seconds
            if self.fail_first and self.calls == 1:
                raise OSError(5, "the disk failed the flush")


def durable_append(log, n):
    thread = threading.Thread(target=log.append, args=({"n": n},), kwargs={"durable": True})
    thread.start()
    return thread


def wait_written(log, lines):
    while log._written < lines:
        threading.Event().wait(0.005)


def test_durable_lines_appended_while_a_flush_runs_share_the_next_flush(tmp_path, monkeypatch):
    flush = GatedFlush()
    monkeypatch.setattr(audit_log, "_datasync", flush)
    log = AuditLog(tmp_path, "r1", sync_seconds=None)
    first = durable_append(log, 0)
    assert flush.started[0].wait(10)
    # Two lanes' lines written while the first flush runs: neither is covered by it.
    waiting = [durable_append(log, 1), durable_append(log, 2)]
    wait_written(log, 3)
    flush.let_go[0].set()
    assert flush.started[1].wait(10)  # one of the two flushes for both
    log.append({"n": 3})  # a line that needs no flush of its own, written meanwhile
    flush.let_go[1].set()
    for thread in [first, *waiting]:
        thread.join(10)
    assert flush.calls == 2  # the other of the two found its line flushed: no third flush
    assert log._synced == 3
    log.close()
    assert verify_directory(tmp_path).ok


def test_a_failed_flush_covers_no_line(tmp_path, monkeypatch):
    """Neither the line it was for nor one written while it ran: and no later flush is taken at its
    word either (`test_audit_disk_faults`: none is durable until a restart)."""
    flush = GatedFlush(fail_first=True)
    monkeypatch.setattr(audit_log, "_datasync", flush)
    log = AuditLog(tmp_path, "r1", sync_seconds=None)
    failed: list[BaseException] = []

    def line(n):
        try:
            log.append({"n": n}, durable=True)
        except AuditUnavailable as exc:
            failed.append(exc)

    first = threading.Thread(target=line, args=(0,))
    first.start()
    assert flush.started[0].wait(10)
    second = threading.Thread(target=line, args=(1,))
    second.start()
    wait_written(log, 2)
    flush.let_go[0].set()
    flush.let_go[1].set()
    first.join(10)
    second.join(10)
    assert len(failed) == 2  # the effects after both lines must not run
    assert flush.calls == 1
    assert log._synced == 0
    with contextlib.suppress(AuditUnavailable):
        log.close()
