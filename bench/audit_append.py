"""Benchmark: one audit line appended (`router.audit.log.AuditLog.append`) against its floor.

The floor writes the very same bytes (the lines the log wrote, read back) to a file of its own,
one os.write per line, with the same group commit (a background fsync every 100 ms). The log
does the rest of a line's work on top: the record (seq, prev, ts), one canonical JSON encoding
and its sha256, the whole-line write that cuts back a failed one. Both run in one process, on
the repository's disk, one after the other, twice (the better of each counts: a busy machine
slows both). Target: the floor's cost at least 0.3 of the log's (`floor_share`).
Prints the figures and writes bench/results/audit_append.json.
Usage: .venv/bin/python bench/audit_append.py [--lines 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from router.audit.log import DEFAULT_SYNC_SECONDS, AuditLog  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "audit_append.json"
ENTRY: dict[str, Any] = {
    "router": "bench",
    "action": "CREATE_POST",
    "origin": {"channel": "telegram", "conversation": "telegram:42"},
    "effect": {"platform": "bsky", "kind": "post", "target": None},
    "decision": "allowed",
    "status": "ok",
    "url": "https://bsky.app/profile/me/post/3k",
    "text": "a post of an ordinary length, " * 5,
}


def logged(folder: Path, lines: int) -> tuple[float, list[bytes]]:
    log = AuditLog(folder, "bench", max_bytes=1 << 40, key=b"k" * 32, sync_seconds=DEFAULT_SYNC_SECONDS)
    start = time.perf_counter()
    for i in range(lines):
        log.append({**ENTRY, "command_id": f"c{i}"})
    elapsed = time.perf_counter() - start
    log.close()
    return elapsed, (folder / "bench.jsonl").read_bytes().splitlines(keepends=True)


def floor(folder: Path, written: list[bytes]) -> float:
    fd = os.open(folder / "floor.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    lock, dirty, stop = threading.Lock(), [False], threading.Event()

    def group_commit() -> None:
        while not stop.wait(DEFAULT_SYNC_SECONDS):
            with lock:
                due, dirty[0] = dirty[0], False
            if due:
                os.fsync(fd)

    flusher = threading.Thread(target=group_commit, daemon=True)
    flusher.start()
    start = time.perf_counter()
    for line in written:
        with lock:
            os.write(fd, line)
            dirty[0] = True
    elapsed = time.perf_counter() - start
    stop.set()
    flusher.join()
    os.fsync(fd)
    os.close(fd)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20000)
    args = parser.parse_args()
    runs = []
    for _ in range(2):
        with tempfile.TemporaryDirectory(dir=REPO_ROOT / "bench") as folder:
            log_s, written = logged(Path(folder), args.lines)
            runs.append((log_s, floor(Path(folder), written)))
    log_s = min(run[0] for run in runs)
    floor_s = min(run[1] for run in runs)
    figures = {
        "lines": args.lines,
        "log_us_per_line": round(log_s / args.lines * 1e6, 2),
        "floor_us_per_line": round(floor_s / args.lines * 1e6, 2),
        "floor_share": round(floor_s / log_s, 2),
        "target_floor_share": 0.3,
    }
    print(json.dumps(figures, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
