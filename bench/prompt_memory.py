"""Prompt size and turn time as memory fills: 2,000 console turns, a memory write every tenth.

    .venv/bin/python bench/prompt_memory.py [--turns 2000]

Drives the real loop and workspace with a scripted model (no LLM time), in a temporary
workspace. Every tenth turn the model writes a new memory entry (then answers), the other turns
it answers at once. Prints and saves the first prompt's size (characters and the cautious token
estimate of agent/workspace/memory.py) at a few turns, and the mean turn time of the first and the last
100 turns. Writes bench/results/prompt_memory.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
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
from agent.workspace.memory import estimate_tokens  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "prompt_memory.json"


class NoRouter:
    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "", origin: Any = None
    ) -> dict[str, Any]:
        return {"status": "error", "message": "no router in this bench"}


def write_reply(n: int) -> str:
    fact = {f"fact_{n:04d}": f"the owner's note number {n}: tea at five, the blue notebook, call Sam"}
    return (
        "Noted. <tool_code>"
        + json.dumps([{"name": "_MEMORY_WRITE", "params": {"new_memory": fact}}])
        + ("</tool_code>")
    )


def run(turns: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    try:
        for name in TEMPLATES:
            shutil.copyfile(SHIPPED_WORKSPACE / name, root / name)
        workspace = Workspace(root, root / "logs")
        workspace.ensure()
        llm = ScriptedLLM()
        loop = AgentLoop(workspace, llm, local_actions(), NoRouter())
        samples: dict[int, dict[str, int]] = {}
        durations: list[float] = []
        for turn in range(1, turns + 1):
            if turn % 10 == 0:
                llm.enqueue(write_reply(turn), "I will remember it.")
            else:
                llm.enqueue("Sure.")
            first = len(llm.prompts)
            started = time.perf_counter()
            loop.run_turn("console", f"message {turn}: what about the tea and the notebook?")
            durations.append(time.perf_counter() - started)
            prompt = llm.prompts[first]
            if turn in (1, 10, 100, 500, 1000, turns) or turn % 500 == 0:
                samples[turn] = {
                    "chars": len(prompt),
                    "tokens_estimated": estimate_tokens(prompt),
                    "memory_entries": len(workspace.load_memory()),
                }
        window = min(100, turns)
        return {
            "turns": turns,
            "samples": samples,
            "first_turns_ms": round(sum(durations[:window]) / window * 1000, 2),
            "last_turns_ms": round(sum(durations[-window:]) / window * 1000, 2),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    result = run(parser.parse_args().turns)
    for turn, sample in result["samples"].items():
        print(
            f"turn {turn:>5}: prompt {sample['chars']:>6} chars, ~{sample['tokens_estimated']:>5} tokens, "
            f"{sample['memory_entries']} memory entries"
        )
    print(f"mean turn: first 100 {result['first_turns_ms']} ms, last 100 {result['last_turns_ms']} ms")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
