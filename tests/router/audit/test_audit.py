"""The hash-chained audit log: verify names the first edited, inserted or deleted line; rotation keeps the chain."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from router.audit.chain_check import verify_directory
from router.audit.lines import GENESIS, chain_files
from router.audit.log import AuditLog

REPO = __import__("pathlib").Path(__file__).resolve().parents[3]


def write(tmp_path, n=5, max_bytes=10_000_000, name="r1"):
    log = AuditLog(tmp_path, name, max_bytes=max_bytes)
    for i in range(n):
        log.append(
            {"command_id": f"c{i}", "action": "CREATE_POST", "text": f"post number {i}", "status": "ok"}
        )
    return log


def lines(path):
    return path.read_bytes().splitlines(keepends=True)


def test_intact_log_verifies_and_chains_from_genesis(tmp_path):
    write(tmp_path)
    verdict = verify_directory(tmp_path)
    assert verdict.ok and verdict.lines == 5
    records = [json.loads(line) for line in lines(tmp_path / "r1.jsonl")]
    assert records[0]["prev"] == GENESIS and records[0]["seq"] == 1
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(records))


@pytest.mark.parametrize("line_index", [0, 2, 4])
def test_one_edited_byte_anywhere_fails_at_that_line(tmp_path, line_index):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    data[line_index] = data[line_index].replace(b"post number", b"post numbex")
    path.write_bytes(b"".join(data))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok
    assert f"line {line_index + 1}" in verdict.problem and "edited" in verdict.problem


def test_edit_with_recomputed_hash_is_caught_by_the_next_line(tmp_path):
    from router.audit.lines import canonical, record_hash

    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    record = json.loads(data[1])
    record["text"] = "something the agent never posted"
    record["hash"] = record_hash(record)
    data[1] = (canonical(record) + "\n").encode()
    path.write_bytes(b"".join(data))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 3" in verdict.problem and "does not follow" in verdict.problem


def test_deleted_line_is_named(tmp_path):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    del data[2]
    path.write_bytes(b"".join(data))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 3" in verdict.problem and "deleted" in verdict.problem


def test_first_line_deleted_is_caught(tmp_path):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[1:]))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 1" in verdict.problem and "deleted" in verdict.problem


def test_inserted_and_repeated_lines_are_named(tmp_path):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    path.write_bytes(b"".join([*data[:3], data[1], *data[3:]]))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 4" in verdict.problem and "inserted" in verdict.problem


def test_reordered_lines_are_caught(tmp_path):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    data[1], data[2] = data[2], data[1]
    path.write_bytes(b"".join(data))
    assert not verify_directory(tmp_path).ok


def test_whitespace_only_edit_is_caught(tmp_path):
    write(tmp_path)
    path = tmp_path / "r1.jsonl"
    data = lines(path)
    data[0] = data[0].replace(b'","', b'", "', 1)
    path.write_bytes(b"".join(data))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 1" in verdict.problem


def test_rotation_keeps_the_chain_and_a_deleted_rotated_file_is_caught(tmp_path):
    write(tmp_path, n=30, max_bytes=1024)
    files = chain_files(tmp_path, "r1")
    assert len(files) > 2
    first_of = [json.loads(lines(f)[0]) for f in files]
    last_of = [json.loads(lines(f)[-1]) for f in files]
    assert all(nxt["prev"] == prev["hash"] for prev, nxt in zip(last_of, first_of[1:], strict=False))
    assert verify_directory(tmp_path).ok and verify_directory(tmp_path).lines == 30
    files[1].unlink()
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "deleted" in verdict.problem


def test_a_restarted_writer_goes_on_from_the_last_line(tmp_path):
    write(tmp_path, n=3)
    again = AuditLog(tmp_path, "r1")
    record = again.append({"command_id": "after-restart"})
    assert record["seq"] == 4
    assert verify_directory(tmp_path).ok


def test_torn_last_line_is_reported(tmp_path):
    write(tmp_path, n=3)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(path.read_bytes()[:-10])
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "line 3" in verdict.problem


def test_each_router_has_its_own_chain(tmp_path):
    write(tmp_path, n=2, name="r1")
    write(tmp_path, n=3, name="r2")
    assert verify_directory(tmp_path).lines == 5
    path = tmp_path / "r2.jsonl"
    path.write_bytes(path.read_bytes().replace(b"number 1", b"number 9"))
    verdict = verify_directory(tmp_path)
    assert not verdict.ok and "r2" in verdict.problem


def test_cli_verify_exit_codes(tmp_path):
    write(tmp_path)
    ok = subprocess.run(
        [sys.executable, "-m", "router.audit", "verify", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 2 and "intact: 5 lines" in ok.stdout  # no checkpoint: its end unchecked
    path = tmp_path / "r1.jsonl"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01  # one byte
    path.write_bytes(bytes(raw))
    bad = subprocess.run(
        [sys.executable, "-m", "router.audit", "verify", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "BROKEN" in bad.stdout


def test_empty_folder_is_not_a_pass(tmp_path):
    assert not verify_directory(tmp_path / "nothing").ok
