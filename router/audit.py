"""The router's audit log: one JSON line per command, each chained to the one before it.

Every line is the canonical JSON of a record (sorted keys, no spaces) holding `seq` (1, 2, …
across files), `prev` (the `hash` of the line before it; 64 zeros for the very first) and `hash`
(sha256 of the record's canonical JSON without `hash`). So editing a byte, inserting, deleting
or reordering a line breaks the chain where it happened, and `verify` names that line. Rotation
keeps the chain: the active file `<name>.jsonl` is renamed `<name>.<last seq>.jsonl` and the new
file goes on from the old one's last hash and seq.

One writer per file: each router writes its own `<router id>.jsonl`. The last line of a file
is covered once the next one is written (and by the copy in the Redis audit stream).

    python -m router.audit verify [DIR]     exit 0 when every chain holds, 1 with the first break
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_ROTATED = re.compile(r"^(?P<name>.+)\.(?P<seq>\d{12})\.jsonl$")


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body).encode("utf-8", "replace")).hexdigest()


class AuditLog:
    """Appends chained records to `<directory>/<name>.jsonl`, rotating past `max_bytes`."""

    def __init__(self, directory: Path, name: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            raise ValueError(f"audit log name {name!r}: letters, digits, '_', '.', '-' only")
        self.directory = directory
        self.name = name
        self.max_bytes = max_bytes
        self.path = directory / f"{name}.jsonl"
        self._lock = threading.Lock()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.seq, self.last_hash = self._resume()

    def _resume(self) -> tuple[int, str]:
        """The seq and hash to go on from: the active file's last line, else the newest rotated one."""
        for path in reversed(chain_files(self.directory, self.name)):
            last = last_line(path)
            if last is None:
                continue
            try:
                record = json.loads(last)
                return int(record["seq"]), str(record["hash"])
            except (ValueError, KeyError, TypeError):
                # A torn or edited last line: verify reports it; go on from the line's own hash.
                return 0, hashlib.sha256(last.encode("utf-8", "replace")).hexdigest()
        return 0, GENESIS

    def append(self, entry: dict[str, Any], durable: bool = False) -> dict[str, Any]:
        """Write one record (entry + seq, ts, prev, hash) and return it. `durable`: fsync it."""
        with self._lock:
            if self.path.exists() and self.path.stat().st_size >= self.max_bytes:
                self._rotate()
            record = {**entry, "seq": self.seq + 1, "prev": self.last_hash}
            record.setdefault("ts", time.time())
            record["hash"] = record_hash(record)
            line = (canonical(record) + "\n").encode("utf-8", "replace")
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)  # one write on an O_APPEND file: a line is never interleaved
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            self.seq, self.last_hash = record["seq"], record["hash"]
            return record

    def _rotate(self) -> None:
        target = self.directory / f"{self.name}.{self.seq:012d}.jsonl"
        os.replace(self.path, target)
        with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def last_line(path: Path, chunk: int = 65536) -> str | None:
    """The last non-empty line of a file, read from its end."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            data = b""
            while end > 0:
                start = max(0, end - chunk)
                handle.seek(start)
                data = handle.read(end - start) + data
                end = start
                stripped = data.rstrip(b"\n")
                if b"\n" in stripped or end == 0:
                    return stripped.rsplit(b"\n", 1)[-1].decode("utf-8", "replace") or None
    except FileNotFoundError:
        return None
    return None


def chain_files(directory: Path, name: str) -> list[Path]:
    """One chain's files in order: the rotated ones by their last seq, then the active one."""
    rotated = sorted(
        p
        for p in directory.glob(f"{name}.*.jsonl")
        if (m := _ROTATED.match(p.name)) is not None and m.group("name") == name
    )
    active = directory / f"{name}.jsonl"
    return [*rotated, *([active] if active.exists() else [])]


def chain_names(directory: Path) -> list[str]:
    names = set()
    for path in directory.glob("*.jsonl"):
        match = _ROTATED.match(path.name)
        names.add(match.group("name") if match else path.name[: -len(".jsonl")])
    return sorted(names)


@dataclass
class Verdict:
    ok: bool
    lines: int  # records checked
    problem: str = ""  # the first break, naming file and line
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)  # chain -> (last seq, its hash)

    def summary(self) -> str:
        if self.ok:
            return f"audit log intact: {self.lines} lines"
        if not self.lines and self.problem.startswith("no audit log"):
            return self.problem + " (the router writes it as it handles commands)"
        return f"audit log BROKEN: {self.problem}"


def _lines(files: list[Path]) -> Iterator[tuple[Path, int, bytes]]:
    for path in files:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                yield path, number, raw


def verify_chain(files: list[Path]) -> Verdict:
    """Check one chain; the first line that is edited, inserted, missing or out of order fails it."""
    expected_seq, prev_hash, count = 1, GENESIS, 0
    for path, number, raw in _lines(files):
        where = f"{path.name} line {number}"
        text = raw.decode("utf-8", "replace")
        if not text.endswith("\n"):
            return Verdict(False, count, f"{where}: an unfinished last line (a torn write or an edit)")
        try:
            record = json.loads(text)
            if not isinstance(record, dict):
                raise ValueError("not an object")
            seq, prev, stored = int(record["seq"]), str(record["prev"]), str(record["hash"])
        except (ValueError, KeyError, TypeError):
            return Verdict(False, count, f"{where}: not an audit record (edited)")
        if canonical(record) + "\n" != text or record_hash(record) != stored:
            return Verdict(False, count, f"{where} (seq {seq}): edited (its hash does not match its content)")
        if seq > expected_seq:
            return Verdict(
                False,
                count,
                f"{where}: {seq - expected_seq} line(s) deleted before it "
                f"(expected seq {expected_seq}, found {seq})",
            )
        if seq < expected_seq:
            return Verdict(
                False, count, f"{where}: inserted or repeated (seq {seq} after {expected_seq - 1})"
            )
        if prev != prev_hash:
            return Verdict(
                False,
                count,
                f"{where} (seq {seq}): does not follow the line before it (that line was edited or replaced)",
            )
        expected_seq, prev_hash, count = seq + 1, stored, count + 1
    return Verdict(True, count, heads={"": (expected_seq - 1, prev_hash)})


def verify_directory(directory: Path) -> Verdict:
    names = chain_names(directory) if directory.is_dir() else []
    if not names:
        return Verdict(False, 0, f"no audit log in {directory}")
    total, heads = 0, {}
    for name in names:
        verdict = verify_chain(chain_files(directory, name))
        if not verdict.ok:
            return Verdict(False, total + verdict.lines, f"chain {name}: {verdict.problem}")
        total += verdict.lines
        heads[name] = verdict.heads[""]
    return Verdict(True, total, heads=heads)


def missing_tail(heads: dict[str, tuple[int, str]], mirrored: dict[str, tuple[int, str]]) -> str:
    """The chain's end against the newest line each router mirrored to Redis: lines deleted from
    the end of a file (which the chain alone cannot show) or a replaced last line. "" when none."""
    for name, (seq, digest) in sorted(mirrored.items()):
        last_seq, last_hash = heads.get(name, (0, GENESIS))
        if last_seq < seq:
            return (f"chain {name}: {seq - last_seq} line(s) deleted at the end (the file ends at seq "
                    f"{last_seq}; the Redis audit stream holds seq {seq})")
        if last_seq == seq and last_hash != digest:
            return f"chain {name}: its last line (seq {seq}) differs from the copy in the Redis audit stream"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m router.audit", description="Check the router's audit log."
    )
    parser.add_argument("command", choices=["verify"])
    parser.add_argument("directory", nargs="?", type=Path, help="the audit folder (default: the router's)")
    args = parser.parse_args(argv)
    directory = args.directory
    if directory is None:
        from router.settings import DEFAULT_ENV_FILE, audit_directory, merged_environment

        directory = audit_directory(merged_environment(DEFAULT_ENV_FILE))
    verdict = verify_directory(directory)
    print(verdict.summary())
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
