"""Checking a chain from its files alone: the first line edited, inserted, missing or out of order
names where the chain breaks (`router.audit.verify` adds the checkpoints and the Redis copy)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from router.audit.lines import GENESIS, chain_files, chain_names, sealed_line


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
        try:
            text = raw.decode("utf-8")  # strictly: a byte edited into an invalid sequence is an edit
        except UnicodeDecodeError:
            return Verdict(False, count, f"{where}: not UTF-8 (edited)")
        if not text.endswith("\n"):
            return Verdict(False, count, f"{where}: an unfinished last line (a torn write or an edit)")
        try:
            record = json.loads(text)
            if not isinstance(record, dict):
                raise ValueError("not an object")
            seq, prev, stored = int(record["seq"]), str(record["prev"]), str(record["hash"])
        except (ValueError, KeyError, TypeError):
            return Verdict(False, count, f"{where}: not an audit record (edited)")
        digest, line = sealed_line(record)
        if digest != stored or line + "\n" != text:
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
        if record.get("event") == "audit_gap":  # the router found the log cut or rewritten at start
            return Verdict(
                False, count, f"{where} (seq {seq}): the router found at start: {record.get('problem')}"
            )
        expected_seq, prev_hash, count = seq + 1, stored, count + 1
    return Verdict(True, count, heads={"": (expected_seq - 1, prev_hash)})


def hash_at(directory: Path, name: str, seq: int) -> str | None:
    """The hash of the chain's line `seq` (read from the newest file back), None when absent."""
    for path in reversed(chain_files(directory, name)):
        with path.open("rb") as handle:
            first = handle.readline()
            try:
                if int(json.loads(first)["seq"]) > seq:
                    continue
            except (ValueError, KeyError, TypeError):
                continue
            for raw in [first, *handle]:
                try:
                    record = json.loads(raw)
                    if int(record["seq"]) == seq:
                        return str(record["hash"])
                except (ValueError, KeyError, TypeError):
                    continue
        return None
    return None


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

