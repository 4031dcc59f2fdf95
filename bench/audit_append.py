"""Benchmark: one audit line appended (`router.audit.log.AuditLog.append`) against its floor.

The floor writes the very same bytes (the lines the log wrote, read back) to a file of its own,
one os.write per line, with the same group commit (a background fsync every 100 ms); the log is
given the entries, made before its clock starts as the floor's lines are. The log
does the rest of a line's work on top: the record (seq, prev, ts), its shape checked, one
canonical JSON encoding (orjson where it writes the standard library's bytes:
`router.audit.canonical_json`) and its sha256, the whole-line write that cuts back a failed one.
Both run in one process, on the repository's disk, in turns (log, floor, log, floor, ...),
`--rounds` times; each round's share is printed and the median counts (a busy machine slows
both, and not evenly). Each is timed twice: by the wall clock, and by the appending thread's own
CPU time (system time included), which waiting for a core on a shared machine does not inflate.
Where a line's CPU time goes (`breakdown`): each step of an append timed alone, on the same
record, by the real functions: the record, the shape check, the encoding, the sha256 of the body,
the splice of the hash into the line, the lock, the write; what the steps leave of a whole append
is the calls and the bookkeeping between them. No redaction happens on this path (the recorder
redacts an entry before it appends it). Also timed: the standard library's encoding of the same
record, the path a record off the fast one takes. Target: the floor's cost at least 0.3 of the
log's. Prints the figures and writes bench/results/audit_append.json.
Usage: .venv/bin/python bench/audit_append.py [--lines 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from router.audit import canonical_json  # noqa: E402
from router.audit.lines import GENESIS, canonical, seal  # noqa: E402
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


class Spent(NamedTuple):
    wall: float
    cpu: float  # the appending thread's own CPU time: what waiting for a core does not inflate


class Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def spent(self) -> Spent:
        return Spent(time.perf_counter() - self.wall, time.thread_time() - self.cpu)


def logged(folder: Path, lines: int) -> tuple[Spent, list[bytes]]:
    log = AuditLog(folder, "bench", max_bytes=1 << 40, key=b"k" * 32, sync_seconds=DEFAULT_SYNC_SECONDS)
    # Made before the clock starts, as the floor's lines are; a few hundred, in turns: each is in the
    # cache when appended, as an entry the router has just made is.
    entries = [{**ENTRY, "command_id": f"c{i}"} for i in range(256)]
    clock = Clock()
    for i in range(lines):
        log.append(entries[i & 255])
    elapsed = clock.spent()
    log.close()
    return elapsed, (folder / "bench.jsonl").read_bytes().splitlines(keepends=True)


def floor(folder: Path, written: list[bytes]) -> Spent:
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
    clock = Clock()
    for line in written:
        with lock:
            os.write(fd, line)
            dirty[0] = True
    elapsed = clock.spent()
    stop.set()
    flusher.join()
    os.fsync(fd)
    os.close(fd)
    return elapsed


def _cpu(step: Any, lines: int) -> float:
    """`step` called `lines` times: CPU seconds."""
    clock = Clock()
    for _ in range(lines):
        step()
    return clock.spent().cpu


def breakdown(folder: Path, lines: int) -> dict[str, float]:
    """CPU seconds of each step of one append, each timed alone over `lines` calls on the record the
    log writes (the bookkeeping between them: what a whole append costs beyond their sum)."""
    entry = {**ENTRY, "command_id": "c1"}
    record = {**entry, "seq": 1, "prev": GENESIS, "ts": time.time()}
    line = seal(dict(record))
    marked = {**record, "hash": GENESIS}  # the shape the encoder sees: the hash's marker is a str too
    body = line[: line.index(b'"hash":')] + line[line.index(b'"', line.index(b'"hash":') + 8) + 2 :]
    lock = threading.Lock()
    fd = os.open(folder / "steps.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def build() -> None:
        made = entry.copy()
        made["seq"] = 2
        made["prev"] = GENESIS
        if "ts" not in made:
            made["ts"] = time.time()

    def locked() -> None:
        with lock:
            pass

    fast = canonical_json.available()
    steps = {
        "record": build,
        "shape_check": (lambda: canonical_json.is_plain(entry)) if fast else (lambda: None),
        "encoding": (lambda: canonical_json.fast(marked, entry)) if fast else (lambda: canonical(marked)),
        "hashing": lambda: hashlib.sha256(body).hexdigest(),
        "seal_in_all": lambda: seal(dict(record), entry),
        "copy_in_seal_in_all": lambda: dict(record),  # taken off seal_in_all: its dict is the log's own
        "locking": locked,
        "write": lambda: os.write(fd, line),
        "standard_library_encoding": lambda: canonical(marked),
    }
    try:
        spent = {name: _cpu(step, lines) for name, step in steps.items()}
    finally:
        os.close(fd)
    spent["encoding"] -= spent["shape_check"]  # `fast` checks the shape, then encodes
    spent["seal_in_all"] -= spent.pop("copy_in_seal_in_all")
    spent["splice"] = spent["seal_in_all"] - spent["shape_check"] - spent["encoding"] - spent["hashing"]
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(dir=REPO_ROOT / "bench") as folder:
            log_s, written = logged(Path(folder), args.lines)
            runs.append((log_s, floor(Path(folder), written), breakdown(Path(folder), args.lines)))

    def us(values: list[float]) -> float:
        return round(statistics.median(values) / args.lines * 1e6, 2)

    cpu_shares = [round(f.cpu / g.cpu, 2) for g, f, _ in runs]
    wall_shares = [round(f.wall / g.wall, 2) for g, f, _ in runs]
    steps = {name: us([spent[name] for _, _, spent in runs]) for name in runs[0][2]}
    log_cpu = us([g.cpu for g, _, _ in runs])
    parts = ("record", "seal_in_all", "locking", "write")
    figures = {
        "lines": args.lines,
        "rounds": args.rounds,
        "load_average": round(os.getloadavg()[0], 2),
        "fast_encoder": canonical_json.available(),
        "log_us_per_line_cpu": log_cpu,
        "floor_us_per_line_cpu": us([f.cpu for _, f, _ in runs]),
        "breakdown_us_cpu": {
            **{name: steps[name] for name in ("record", "shape_check", "encoding", "hashing", "splice",
                                             "locking", "write")},
            "redaction": 0.0,
            "calls_and_bookkeeping": round(log_cpu - sum(steps[name] for name in parts), 2),
        },
        "standard_library_encoding_us_cpu": steps["standard_library_encoding"],
        "floor_share_cpu": statistics.median(cpu_shares),
        "floor_share_cpu_per_round": cpu_shares,
        "log_us_per_line_wall": us([g.wall for g, _, _ in runs]),
        "floor_us_per_line_wall": us([f.wall for _, f, _ in runs]),
        "floor_share_wall": statistics.median(wall_shares),
        "floor_share_wall_per_round": wall_shares,
        "target_floor_share": 0.3,
    }
    print(json.dumps(figures, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
