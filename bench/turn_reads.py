"""Workspace reads and time of one two-step turn (an action, then the answer), on a full workspace.

    .venv/bin/python bench/turn_reads.py [--turns 200]

A turn loads one snapshot of the workspace and builds each step's prompt from it: every file is
opened once per turn however many steps it takes (before: the history 3 times and each catalogue
3 times for two steps). The LLM is the scripted one and the router a stand-in, so the figures are
the agent's own cost. The history holds its 10 exchanges and memory 40 entries.
Writes bench/results/turn_reads.json.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import io
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.actions import local_actions  # noqa: E402
from agent.llm.scripted.llm import ScriptedLLM  # noqa: E402
from agent.mind.loop import AgentLoop  # noqa: E402
from agent.workspace.folder import SHIPPED_WORKSPACE, TEMPLATES, Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "turn_reads.json"
ACTION = '<tool_code>[{"name": "PING", "params": {}}]</tool_code>'


class Router:
    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "", origin: Any = None
    ) -> dict[str, Any]:
        return {"status": "ok", "result": {"pong": True}}


def counting_opens(root: Path) -> collections.Counter[str]:
    """Count every open-for-reading of a file under `root` (io.open and builtin open)."""
    reads: collections.Counter[str] = collections.Counter()
    real_open = io.open

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | Path) and "r" in mode and "+" not in mode:
            resolved = Path(file).resolve()
            if resolved.is_relative_to(root):
                reads[str(resolved.relative_to(root))] += 1
        return real_open(file, mode, *args, **kwargs)

    io.open = counting_open
    builtins.open = counting_open
    return reads


def run(turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        for name in TEMPLATES:
            shutil.copyfile(SHIPPED_WORKSPACE / name, root / name)
        workspace = Workspace(root)
        workspace.ensure()
        for batch in range(4):
            facts = {f"fact_{batch}_{i}": f"something worth keeping, number {i}" for i in range(10)}
            workspace.merge_memory(facts, "console")
        llm = ScriptedLLM([])
        loop = AgentLoop(workspace, llm, local_actions(), Router())
        for i in range(10):
            llm.enqueue(f"answer {i}")
            loop.run_turn("console", f"warm-up message {i}")
        reads = counting_opens(root)
        times = []
        for i in range(turns):
            llm.enqueue(ACTION, f"Pinged ({i}).")
            started = time.perf_counter()
            loop.run_turn("console", f"ping the router, please ({i})")
            times.append(time.perf_counter() - started)
    per_turn = {name: count / turns for name, count in sorted(reads.items())}
    return {
        "turns": turns,
        "steps_per_turn": 2,
        "python": platform.python_version(),
        "reads_per_turn": per_turn,
        "files_read_more_than_once_per_turn": [name for name, n in per_turn.items() if n > 1],
        "turn_ms": {
            "median": round(statistics.median(times) * 1000, 2),
            "p95": round(sorted(times)[int(len(times) * 0.95) - 1] * 1000, 2),
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    figures = run(parser.parse_args(argv).turns)
    print(json.dumps(figures, indent=1))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
