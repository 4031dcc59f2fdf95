"""Attacks on the audit log's files: lines edited, duplicated, moved across rotated files, a
rotated file removed or renamed, lines cut from the end, the chain rewritten with fresh hashes,
checkpoints forged or removed, a whole chain made up. `audit verify` exits 1 when it can tell,
2 when the files hold but their end cannot be vouched for, never 0 after tampering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from router.audit import checkpoint as audit_checkpoint
from router.audit.lines import canonical, chain_files, record_hash
from router.audit.log import AuditLog
from router.audit.verify import BROKEN, OK, UNCHECKED, verify

REPO = Path(__file__).resolve().parents[3]
KEY = bytes(range(32))


def write(
    folder: Path, n: int, max_bytes: int = 10_000_000, name: str = "r1", key: bytes | None = KEY
) -> None:
    log = AuditLog(folder, name, max_bytes=max_bytes, key=key, sync_seconds=None)
    for i in range(n):
        log.append(
            {"command_id": f"c{i}", "action": "CREATE_POST", "text": f"post number {i}", "status": "ok"}
        )
    log.close()


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def code(folder: Path, key: bytes | None = KEY, mirrored=None) -> int:
    return verify(folder, key, mirrored).exit_code


def test_an_untouched_log_with_its_checkpoint_is_verified_without_redis(tmp_path):
    write(tmp_path, 30, max_bytes=1024)
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == OK and "keyed checkpoint" in report.summary()


def test_a_duplicated_line_is_caught(tmp_path):
    write(tmp_path, 6)
    path = tmp_path / "r1.jsonl"
    raw = lines(path)
    path.write_bytes(b"".join(raw[:3] + [raw[2]] + raw[3:]))
    assert code(tmp_path) == BROKEN and "repeated" in verify(tmp_path, KEY, None).summary()


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_a_rotated_file_removed_from_the_rotation_is_caught(tmp_path, which):
    write(tmp_path, 40, max_bytes=700)
    rotated = chain_files(tmp_path, "r1")[:-1]
    assert len(rotated) >= 3
    {"first": rotated[0], "middle": rotated[len(rotated) // 2], "last": rotated[-1]}[which].unlink()
    assert code(tmp_path) == BROKEN


def test_two_rotated_files_swapped_by_name_are_caught(tmp_path):
    write(tmp_path, 40, max_bytes=700)
    first, second = chain_files(tmp_path, "r1")[:2]
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    assert code(tmp_path) == BROKEN


def test_a_line_moved_to_the_next_rotated_file_is_caught_there(tmp_path):
    write(tmp_path, 40, max_bytes=700)
    first, second = chain_files(tmp_path, "r1")[:2]
    a, b = lines(first), lines(second)
    first.write_bytes(b"".join(a[:-1]))
    second.write_bytes(b"".join([b[0], a[-1], *b[1:]]))
    assert code(tmp_path) == BROKEN


@pytest.mark.parametrize("cut", [1, 3])
def test_lines_cut_from_the_end_are_caught_by_the_checkpoint(tmp_path, cut):
    write(tmp_path, 10)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[:-cut]))
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and f"{cut} line(s) deleted at the end" in report.summary()


def test_the_newest_file_removed_whole_is_caught(tmp_path):
    write(tmp_path, 40, max_bytes=700)
    (tmp_path / "r1.jsonl").unlink()
    assert code(tmp_path) == BROKEN


def test_a_chain_rewritten_with_fresh_hashes_is_caught_by_the_checkpoint(tmp_path):
    """Someone who can write the files edits line 4 and recomputes every hash after it: the
    chain holds, but its end no longer matches the sealed checkpoint."""
    write(tmp_path, 8)
    path = tmp_path / "r1.jsonl"
    records = [json.loads(raw) for raw in lines(path)]
    records[3]["text"] = "something the owner never posted"
    for i in range(3, len(records)):
        records[i]["prev"] = records[i - 1]["hash"]
        records[i]["hash"] = record_hash(records[i])
    path.write_text("".join(canonical(r) + "\n" for r in records), encoding="utf-8")
    assert code(tmp_path, key=None) == UNCHECKED  # the files alone hold: not "verified"
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and "rewritten" in report.summary()


def test_a_checkpoint_forged_without_the_key_is_caught(tmp_path):
    write(tmp_path, 10)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[:-2]))
    last = json.loads(lines(path)[-1])
    head = audit_checkpoint.path_of(tmp_path, "r1")
    forged = json.loads(head.read_text())
    forged.update(seq=last["seq"], hash=last["hash"])  # points at the new end, old seal
    head.write_text(json.dumps(forged))
    assert code(tmp_path) == BROKEN
    audit_checkpoint.write(tmp_path, "r1", last["seq"], last["hash"], b"a guessed key 0123456789abcdef")
    assert code(tmp_path) == BROKEN


@pytest.mark.parametrize("damage", ["remove", "garbage"])
def test_a_checkpoint_removed_or_garbled_is_never_a_pass(tmp_path, damage):
    write(tmp_path, 10)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[:-2]))
    head = audit_checkpoint.path_of(tmp_path, "r1")
    if damage == "remove":
        head.unlink()
        report = verify(tmp_path, KEY, None)
        assert report.exit_code == UNCHECKED and "no checkpoint" in report.summary()
    else:
        head.write_text("{not json")
        assert code(tmp_path) == BROKEN


def test_a_made_up_chain_is_not_vouched_for(tmp_path):
    write(tmp_path, 5)
    write(tmp_path / "elsewhere", 3, name="r9", key=None)
    for path in (tmp_path / "elsewhere").glob("r9*.jsonl"):
        os.replace(path, tmp_path / path.name)
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == UNCHECKED and "chain r9: no checkpoint" in report.summary()


def test_without_the_key_or_redis_the_end_is_unchecked_and_says_so(tmp_path):
    write(tmp_path, 5)
    report = verify(tmp_path, None, None)
    assert report.exit_code == UNCHECKED
    assert "NOT checked" in report.summary() and "Redis is not reachable" in report.summary()
    assert (
        verify(tmp_path, None, {"r1": (5, json.loads(lines(tmp_path / "r1.jsonl")[-1])["hash"])}).exit_code
        == OK
    )


def test_lines_cut_then_the_router_restarted_stays_broken(tmp_path):
    """The router finds the cut at start and writes it into the chain: its next checkpoints
    cannot launder the gap."""
    write(tmp_path, 10)
    path = tmp_path / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[:-3]))
    write(tmp_path, 4)  # the router starts again and goes on
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and "3 line(s) missing at the end" in report.summary()


def test_a_rewrite_then_a_router_restart_stays_broken(tmp_path):
    write(tmp_path, 6)
    path = tmp_path / "r1.jsonl"
    records = [json.loads(raw) for raw in lines(path)]
    records[-1]["text"] = "forged"
    records[-1]["hash"] = record_hash(records[-1])
    path.write_text("".join(canonical(r) + "\n" for r in records), encoding="utf-8")
    write(tmp_path, 2)
    assert "rewritten" in verify(tmp_path, KEY, None).summary()


def test_group_commit_checkpoints_the_head_soon_after_writes_and_at_close(tmp_path):
    from tests.router.router_helpers import wait_until

    log = AuditLog(tmp_path, "r1", key=KEY, sync_seconds=0.02)
    for i in range(50):
        log.append({"command_id": f"c{i}"})
    wait_until(
        lambda: (audit_checkpoint.read(tmp_path, "r1") or audit_checkpoint.Checkpoint(0, "", "")).seq == 50,
        "the background sync to checkpoint the head",
        10,
    )
    log.append({"command_id": "last"})
    log.close()
    found = audit_checkpoint.read(tmp_path, "r1")
    assert found is not None and found.seq == 51 and code(tmp_path) == OK


def test_the_key_is_made_once_0600_and_outside_the_audit_folder(tmp_path):
    from router.config.settings import audit_directory, audit_key_file

    env = {"ROUTER_DATA_DIR": str(tmp_path)}
    key_path = audit_key_file(env)
    assert key_path.parent != audit_directory(env)
    key = audit_checkpoint.load_key(key_path, create=True)
    assert audit_checkpoint.load_key(key_path, create=True) == key
    assert (key_path.stat().st_mode & 0o777) == 0o600


def test_the_command_line_exit_codes(tmp_path):
    write(tmp_path / "audit", 5)
    key_file = tmp_path / "audit.key"
    key_file.write_text(KEY.hex())

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "router.audit", "verify", str(tmp_path / "audit"), *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "ROUTER_AUDIT_KEY_FILE": str(tmp_path / "missing.key")},
        )

    assert run("--key-file", str(key_file)).returncode == OK
    assert run().returncode == UNCHECKED
    path = tmp_path / "audit" / "r1.jsonl"
    path.write_bytes(b"".join(lines(path)[:-1]))
    assert run("--key-file", str(key_file)).returncode == BROKEN


def test_the_audit_settings_are_known_to_the_router(tmp_path):
    from router.config.settings import ConfigError, RouterSettings

    env = {
        "REDIS_URL": "redis://router:x@127.0.0.1:1/0",
        "ROUTER_DATA_DIR": str(tmp_path),
        "ROUTER_AUDIT_KEY_FILE": str(tmp_path / "k.key"),
        "ROUTER_AUDIT_SYNC_MS": "250",
    }
    settings = RouterSettings.from_env(env)
    assert settings.audit_sync_ms == 250 and settings.audit_key_file == tmp_path / "k.key"
    with pytest.raises(ConfigError, match="ROUTER_AUDIT_SYNC_MS"):
        RouterSettings.from_env({**env, "ROUTER_AUDIT_SYNC_MS": "0"})
