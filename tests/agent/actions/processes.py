"""Checks on the processes a browser visit started: all of them must be gone afterwards."""

from __future__ import annotations

import time
from pathlib import Path


def children_of(pid: int) -> list[int]:
    """Every live descendant of `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == current]
        found.extend(kids)
        frontier.extend(kids)
    return found


def is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def still_running(pids: list[int], grace_seconds: float = 15.0) -> list[int]:
    """The pids still alive once `grace_seconds` have passed (a quit browser exits asynchronously,
    and slowly on a loaded machine); returns as soon as all are gone."""
    deadline = time.monotonic() + grace_seconds
    while True:
        alive = [pid for pid in pids if is_running(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def assert_all_quit(record: dict) -> None:
    """The chromedriver and every browser process it started are gone, the profile removed."""
    assert record["session"].closed
    assert record["service_pid"] and record["browser_pids"], "expected a local chromedriver with a browser"
    left = still_running([record["service_pid"], *record["browser_pids"]])
    assert left == [], f"processes left running: {left}"
    assert not record["profile_dir"].exists()
