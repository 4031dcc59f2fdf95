"""Time _BROWSER_VISION on a local page: browser start, whole visit, peak RSS of driver + browser.

    .venv/bin/python bench/browser_vision.py [visits]
    # prints a table, writes bench/results/browser_vision.json

Every visit starts a fresh Chromium (the action never reuses one), so each is a cold start;
the first also pays for loading the binaries from disk.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.actions import ActionContext
from agent.actions import browser_vision as module
from agent.config.sections import BrowserSettings
from agent.llm.scripted.llm import ScriptedLLM
from agent.workspace.folder import Workspace
from tests.support.web_pages import PageServer

RESULTS = Path(__file__).resolve().parent / "results" / "browser_vision.json"
BROWSER = BrowserSettings(allow_private_addresses=True, page_load_timeout=20, total_timeout=45)


def process_tree(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = [root], [root]
    while frontier:
        current = frontier.pop()
        kids = [pid for pid, parent in parents.items() if parent == current]
        tree.extend(kids)
        frontier.extend(kids)
    return tree


def memory_mb(pids: list[int], field: str) -> float:
    """Sum of one smaps_rollup field ("Rss:" counts shared pages once per process, "Pss:" shares them)."""
    total_kib = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith(field):
                    total_kib += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total_kib / 1024


class RssSampler:
    """Samples the summed RSS of chromedriver and its descendants while a visit runs."""

    def __init__(self) -> None:
        self.root: int | None = None
        self.peak_mb = 0.0
        self.peak_pss_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            if self.root is not None:
                tree = process_tree(self.root)
                self.peak_mb = max(self.peak_mb, memory_mb(tree, "Rss:"))
                self.peak_pss_mb = max(self.peak_pss_mb, memory_mb(tree, "Pss:"))

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def visit(ctx: ActionContext, url: str) -> dict[str, Any]:
    real_open = module.open_driver
    timing: dict[str, float] = {}
    with RssSampler() as sampler:
        def timed_open(*args: Any, **kwargs: Any) -> module.BrowserSession:
            started = time.perf_counter()
            session = real_open(*args, **kwargs)
            timing["start_s"] = time.perf_counter() - started
            sampler.root = session.service_pid
            return session

        module.open_driver = timed_open
        try:
            started = time.perf_counter()
            result = module.browser_vision({"url": url}, ctx)
            total = time.perf_counter() - started
        finally:
            module.open_driver = real_open
    return {
        "browser_start_s": round(timing["start_s"], 3),
        "visit_s": round(total, 3),
        "peak_rss_mb": round(sampler.peak_mb, 1),
        "peak_pss_mb": round(sampler.peak_pss_mb, 1),
        "files": len(result["files"]),
    }


def run(visits: int) -> dict[str, Any]:
    server = PageServer().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Workspace(Path(tmp))
            workspace.ensure()
            ctx = ActionContext(workspace, ScriptedLLM([]), "bench", BROWSER)
            rows = [visit(ctx, server.url("/consent")) for _ in range(visits)]
    finally:
        server.stop()
    warm = rows[1:] or rows
    return {
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
                   f"Python {platform.python_version()}",
        "page": "local /consent page (banner dismissed), 1280x1024 screenshot",
        "visits": rows,
        "cold_start_s": rows[0]["browser_start_s"],
        "mean_visit_s": round(sum(r["visit_s"] for r in warm) / len(warm), 3),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
        "peak_pss_mb": max(r["peak_pss_mb"] for r in rows),
    }


def main() -> None:
    visits = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    report = run(visits)
    print(f"{'visit':>5} {'start s':>8} {'visit s':>8} {'peak RSS MB':>12} {'peak PSS MB':>12}")
    for index, row in enumerate(report["visits"], 1):
        print(f"{index:>5} {row['browser_start_s']:>8} {row['visit_s']:>8} {row['peak_rss_mb']:>12} "
              f"{row['peak_pss_mb']:>12}")
    print(f"cold start {report['cold_start_s']} s, mean visit after the first {report['mean_visit_s']} s, "
          f"peak RSS {report['peak_rss_mb']} MB (PSS {report['peak_pss_mb']} MB)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
