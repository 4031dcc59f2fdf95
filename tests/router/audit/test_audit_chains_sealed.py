"""A whole chain deleted is caught: the list of the folder's chains is sealed under the audit key,
so removing one router's `.jsonl` (with or without its `.head`) never passes verify, however long
ago its lines left the Redis stream. Verify decodes strictly (a byte edited into what a lenient
decoder reads as U+FFFD is an edit), and the offline command reads Redis when it is up, or says
it did not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from router.audit.lines import chain_files
from router.audit.log import AuditLog
from router.audit.verify import BROKEN, OK, UNCHECKED, verify

REPO = Path(__file__).resolve().parents[3]
KEY = bytes(range(32))


def write(folder: Path, name: str, n: int, key: bytes | None = KEY, text: str = "post") -> AuditLog:
    log = AuditLog(folder, name, key=key, sync_seconds=None)
    for i in range(n):
        log.append({"router": name, "command_id": f"{name}-{i}", "action": "CREATE_POST", "text": f"{text} {i}"})
    log.close()
    return log


def test_a_routers_chain_deleted_whole_is_caught(tmp_path):
    tmp_path = tmp_path / "audit"
    write(tmp_path, "r1", 5)
    write(tmp_path, "r2", 5)
    assert verify(tmp_path, KEY, None).exit_code == OK
    (tmp_path / "r2.jsonl").unlink()
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and "r2" in report.summary(), report.summary()


def test_a_chain_deleted_with_its_checkpoint_is_caught(tmp_path):
    tmp_path = tmp_path / "audit"
    write(tmp_path, "r1", 5)
    write(tmp_path, "r2", 5)
    for path in [*chain_files(tmp_path, "r2"), tmp_path / "r2.head"]:
        path.unlink()
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and "r2" in report.summary(), report.summary()
    # The Redis copy no longer holds r2's lines (they left the capped stream): still caught.
    mirrored = {"r1": (5, json.loads((tmp_path / "r1.jsonl").read_text().splitlines()[-1])["hash"])}
    assert verify(tmp_path, KEY, mirrored).exit_code == BROKEN


def test_the_sealed_list_removed_too_is_never_a_pass(tmp_path):
    tmp_path = tmp_path / "audit"
    write(tmp_path, "r1", 5)
    write(tmp_path, "r2", 5)
    sealed = [p for p in tmp_path.iterdir() if p.suffix not in (".jsonl", ".head", ".lock")]
    assert sealed, "no sealed list of chains was written"
    for path in [*sealed, *chain_files(tmp_path, "r2"), tmp_path / "r2.head"]:
        path.unlink()
    assert verify(tmp_path, KEY, None).exit_code != OK


def test_a_forged_list_of_chains_is_caught(tmp_path):
    tmp_path = tmp_path / "audit"
    write(tmp_path, "r1", 5)
    write(tmp_path, "r2", 5)
    [sealed] = [p for p in tmp_path.iterdir() if p.suffix not in (".jsonl", ".head", ".lock")]
    body = json.loads(sealed.read_text())
    body["chains"] = ["r1"]
    sealed.write_text(json.dumps(body))
    for path in [*chain_files(tmp_path, "r2"), tmp_path / "r2.head"]:
        path.unlink()
    assert verify(tmp_path, KEY, None).exit_code == BROKEN


def test_a_byte_edited_into_an_invalid_sequence_is_caught(tmp_path):
    tmp_path = tmp_path / "audit"
    write(tmp_path, "r1", 3, text="a\ufffdb")  # a legitimate replacement character in the text
    path = tmp_path / "r1.jsonl"
    raw = path.read_bytes()
    path.write_bytes(raw.replace("\ufffd".encode(), b"\xff", 1))  # what a lenient decoder reads back the same
    report = verify(tmp_path, KEY, None)
    assert report.exit_code == BROKEN and "UTF-8" in report.summary(), report.summary()


def edits(raw: bytes) -> list[bytes]:
    """Every byte flipped, and the file's layout changed: CRLF, no last line break, a space."""
    flipped = [raw[:i] + bytes([raw[i] ^ 1]) + raw[i + 1 :] for i in range(len(raw))]
    return [*flipped, raw.replace(b"\n", b"\r\n"), raw.rstrip(b"\n"), raw.replace(b", ", b",  ", 1)]


@pytest.mark.parametrize("name", ["r1.head", "chains.sealed"])
def test_no_edit_of_a_checkpoint_or_the_sealed_list_passes(tmp_path, name):
    """Fields the MAC does not cover (a checkpoint's name, the files' layout) count as edits too:
    each file must be byte for byte what its writer wrote."""
    folder = tmp_path / "audit"
    write(folder, "r1", 5)
    write(folder, "r2", 5)
    path = folder / name
    raw = path.read_bytes()
    passed = []
    for edited in edits(raw):
        path.write_bytes(edited)
        if verify(folder, KEY, None).exit_code == OK:
            passed.append(edited)
    path.write_bytes(raw)
    assert verify(folder, KEY, None).exit_code == OK
    assert passed == []


def run_verify(folder: Path, redis_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUTER_")}
    env.update({"REDIS_URL": redis_url, "ROUTER_AUDIT_KEY_FILE": str(folder.parent / "missing.key")})
    return subprocess.run([sys.executable, "-m", "router.audit", "verify", str(folder)], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=60)


def test_offline_verify_reads_redis_when_it_is_up(redis_urls, tmp_path):
    folder = tmp_path / "audit"
    write(folder, "r1", 4, key=None)
    last = (folder / "r1.jsonl").read_text().splitlines()[-1]
    admin = redis_urls.admin_client()
    try:
        admin.xadd(redis_urls.keys.audit_stream, {"line": last})
    finally:
        admin.close()
    done = run_verify(folder, redis_urls.router_url)
    assert done.returncode == OK, done.stdout + done.stderr
    assert "Redis audit stream" in done.stdout
    (folder / "r1.jsonl").write_text("".join(line + "\n" for line in (folder / "r1.jsonl").read_text()
                                             .splitlines()[:-1]))
    assert run_verify(folder, redis_urls.router_url).returncode == BROKEN  # the cut end, seen in Redis


def test_offline_verify_says_when_it_did_not_read_redis(tmp_path):
    folder = tmp_path / "audit"
    write(folder, "r1", 4, key=None)
    done = run_verify(folder, "redis://router:x@127.0.0.1:1/0")
    assert done.returncode == UNCHECKED
    assert "Redis" in done.stdout and "not" in done.stdout.split("Redis", 1)[1][:80], done.stdout


def test_router_login_may_read_the_audit_stream(redis_urls):
    client = redis.Redis.from_url(redis_urls.router_url)
    try:
        client.xrevrange(redis_urls.keys.audit_stream, count=1)
    finally:
        client.close()


@pytest.mark.parametrize("kind", ["type:int", "type:bulk", "type:status", "LOADING", "reset"])
def test_offline_verify_through_a_redis_that_answers_garbage_says_it_did_not_read_it(redis_urls, tmp_path, kind):
    """Redis answering the stream's read with a fault or a reply of another shape: verify says it
    did not read Redis and checks the ends against the checkpoints, never a traceback."""
    from tests.support.faulty_redis import FaultyRedis

    folder = tmp_path / "audit"
    write(folder, "r1", 4, key=None)
    proxy = FaultyRedis(redis_urls.server.port, chance=1.0, kinds=(kind,), only=frozenset({b"XREVRANGE"})).start()
    proxy.on = True
    try:
        done = run_verify(folder, proxy.url("router", redis_urls.server.router_password))
    finally:
        proxy.stop()
    assert done.returncode == UNCHECKED, done.stdout + done.stderr
    assert "was not read" in done.stdout and "Traceback" not in done.stderr
