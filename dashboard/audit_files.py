"""Paging back past the dashboard's copy of the audit stream, into the routers' audit files.

Each router writes its own chain: `<id>.jsonl` and, once rotated, `<id>.<last seq>.jsonl`
(router.audit.log). A page older than time T reads every chain backwards from its newest file,
skipping lines at or after T, and merges the chains newest first. Reading back costs the lines
skipped, so a page deep in a long history reads more; nothing is kept between pages. Read only:
the dashboard never opens a file for writing here.
"""

from __future__ import annotations

import heapq
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dashboard.activity import describe, matches, superseded
from dashboard.audit_mirror import AuditMirror
from dashboard.values import json_object, number

BLOCK = 64 * 1024
ROTATED = re.compile(r"^(?P<name>.+)\.(?P<seq>\d{12})\.jsonl$")
MAX_LINE = 1_000_000
MAX_SCANNED = 500_000  # lines one page may read back through


def chains(directory: Path) -> dict[str, list[Path]]:
    """Each router's files, oldest first."""
    found: dict[str, list[tuple[int, Path]]] = {}
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return {}
    for name in names:
        rotated = ROTATED.match(name)
        if rotated:
            found.setdefault(rotated["name"], []).append((int(rotated["seq"]), directory / name))
        elif name.endswith(".jsonl"):
            found.setdefault(name.removesuffix(".jsonl"), []).append((10**13, directory / name))
    return {chain: [path for _, path in sorted(files)] for chain, files in found.items()}


def lines_backwards(path: Path) -> Iterator[bytes]:
    """The file's lines, last first, reading blocks from the end."""
    try:
        handle = path.open("rb")
    except OSError:
        return
    with handle:
        position = handle.seek(0, os.SEEK_END)
        rest = b""
        while position > 0:
            step = min(BLOCK, position)
            position -= step
            handle.seek(position)
            rest = handle.read(step) + rest
            parts = rest.split(b"\n")
            rest = parts[0]
            if len(rest) > MAX_LINE:
                rest = b""  # a line too long to be a record: skipped
            yield from reversed([p for p in parts[1:] if p.strip()])
        if rest.strip():
            yield rest


def records_backwards(files: list[Path]) -> Iterator[tuple[float, dict[str, Any]]]:
    for path in reversed(files):
        for raw in lines_backwards(path):
            record = json_object(raw)
            ts = number(record.get("ts")) if record else None
            if record is not None and ts is not None:
                yield ts, record


def older_page(
    directory: Path, before: float, wanted: dict[str, str], words: list[str], limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """Up to `limit` matching records older than `before` (unix time), newest first, and the
    cursor ("t<ts>") for the next page (None when the files hold no older match)."""
    streams = [
        ((-ts, record) for ts, record in records_backwards(files) if ts < before)
        for files in chains(directory).values()
    ]
    merged = heapq.merge(*streams, key=lambda pair: pair[0])
    found: list[dict[str, Any]] = []
    finished: set[str] = set()  # read backwards: a write's outcome line comes before its start
    for negative_ts, record in itertools.islice(merged, MAX_SCANNED):
        item = describe(record)
        if item["outcome"] != "started" and item["command_id"]:
            finished.add(item["command_id"])
        if superseded(item, finished, wanted) or not matches(item, wanted, words):
            continue
        if len(found) == limit:
            return found, cursor(found[-1]["ts"] if found else before)
        found.append({**item, "id": f"{record.get('router', '?')}:{record.get('seq', -negative_ts)}"})
    return found, None


def cursor(ts: float) -> str:
    return f"t{ts!r}"


def parse_cursor(value: str) -> float | None:
    if not value.startswith("t"):
        return None
    try:
        ts = float(value[1:])
    except ValueError:
        return None
    return ts if ts == ts and (abs(ts) < 1e12 or ts == float("inf")) else None


def activity_page(
    mirror: AuditMirror, directory: Path | None, query: dict[str, str], before: str | None, limit: int
) -> dict[str, Any]:
    """A page from the dashboard's copy of the stream (`before` a stream id), going on into the
    routers' audit files past its oldest line (`before` "t<unix time>") when they are readable."""
    words = query.get("q", "").lower().split()[:10]
    readable = directory is not None and directory.is_dir() and os.access(directory, os.R_OK | os.X_OK)
    older_than = parse_cursor(before) if before else None
    items: list[dict[str, Any]] = []
    older: str | None = None
    if older_than is None:
        mirror.sync()
        items, older, ran_out = mirror.page(query, words, before, limit)
        if not ran_out or not readable:
            return {"activity": items, "older": older, "files": readable}
        older_than = mirror.oldest_ts() or float("inf")
        if before:  # the copy may have dropped lines since that page: never go back above it
            older_than = min(older_than, int(before.split("-", 1)[0]) / 1000)
    if directory is not None and readable:
        more, older = older_page(directory, older_than, query, words, limit - len(items))
        items += more
    return {"activity": items, "older": older, "files": readable}
