"""Benchmark: a console turn with 10 facts in memory against one with 10,000, and the prompt as memory fills.

    .venv/bin/python bench/prompt_memory.py [--rounds 5] [--turns 80] [--fill-turns 2000]

Drives the real loop and workspace with a scripted model (no LLM time, no router: the turn answers
in words), in temporary workspaces:

- 10 vs 10,000: two workspaces whose memory.json is seeded directly (a write through the agent
  stops at its 200-entry cap; a file edited by hand or by an older SafeClaw may hold more), with
  facts of six words of 53, written a minute before (as memory is, between turns). The message
  shares a word with about a quarter of the facts ("dentist", "garden"). The two sides run in
  turns, `--rounds` rounds of two blocks of each side (the order swapped each round); each round's
  ratio of the median turns, wall clock and the process's CPU time (the wall clock holds the two
  fsynced history writes of a turn, whose time the disk decides), is printed with the load
  average. Target (issue 28): a turn with 10,000 facts at most 1.2x one with 10. Also the first
  turn after another process rewrote memory.json (read and indexed again then), and a message
  sharing a word with every fact.
- the prompt as memory fills: `--fill-turns` turns, a memory write every tenth (up to the cap),
  the first prompt's size at a few turns.

Writes bench/results/prompt_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
from agent.workspace.memory import estimate_tokens  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "prompt_memory.json"
MESSAGE = "when is the dentist, and what did Sam say about the garden?"
COMMON_MESSAGE = "what about my notes?"  # every seeded fact's value says "note"
VOCABULARY = [
    "tea", "coffee", "notebook", "blue", "green", "red", "dentist", "doctor", "friday", "monday",
    "garden", "kitchen", "train", "station", "paris", "lisbon", "berlin", "sister", "brother",
    "mother", "father", "cousin", "birthday", "anniversary", "bank", "passport", "bicycle", "piano",
    "guitar", "lesson", "meeting", "project", "deadline", "invoice", "recipe", "bread", "cheese",
    "wine", "plant", "window", "door", "key", "code", "parcel", "library", "book", "film",
    "concert", "ticket", "flight", "hotel", "museum", "beach",
]


class NoRouter:
    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "", origin: Any = None
    ) -> dict[str, Any]:
        return {"status": "error", "message": "no router in this bench"}


def facts(count: int, seed: int = 28) -> dict[str, Any]:
    rng = random.Random(seed)
    memory = {}
    for n in range(count):
        words = rng.sample(VOCABULARY, 6)
        memory[f"{words[0]}_{words[1]}_{n}"] = {
            "value": f"note {n}: {' '.join(words[2:])}, and the {rng.choice(VOCABULARY)} on {n % 28 + 1}",
            "written_at": f"2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}T{n % 24:02d}:00:00Z",
            "conversation": "console",
            "author": "owner",
        }
    memory["dentist"] = {"value": "Dr Ng, Fridays at 9", "written_at": "2026-03-01T00:00:00Z",
                         "conversation": "console", "author": "owner"}
    return memory


def workspace_with(count: int) -> Workspace:
    root = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    for name in TEMPLATES:
        shutil.copyfile(SHIPPED_WORKSPACE / name, root / name)
    workspace = Workspace(root, root / "logs")
    workspace.ensure()
    write_memory(workspace, facts(count))
    return workspace


def write_memory(workspace: Workspace, memory: dict[str, Any], age: float = 60.0) -> None:
    """memory.json as another process writes it (temp file, rename), `age` seconds ago."""
    temp = workspace.root / ".memory.json.bench.tmp"
    temp.write_text(json.dumps(memory, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, workspace.memory_path)
    then = time.time() - age
    os.utime(workspace.memory_path, (then, then))


def turn_times(loop: AgentLoop, llm: ScriptedLLM, count: int, message: str = MESSAGE) -> list[float]:
    return [wall for wall, _ in turn_costs(loop, llm, count, message)]


def turn_costs(
    loop: AgentLoop, llm: ScriptedLLM, count: int, message: str = MESSAGE
) -> list[tuple[float, float]]:
    """(wall clock, CPU time of this process) of each turn."""
    samples = []
    for _ in range(count):
        llm.enqueue("Sure.")
        started, cpu = time.perf_counter(), time.process_time()
        loop.run_turn("console", message)
        samples.append((time.perf_counter() - started, time.process_time() - cpu))
    return samples


def memory_lines(prompt: str) -> int:
    return prompt[prompt.index("<memory>") : prompt.index("</memory>")].count("\n- ")


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def small_vs_large(rounds: int, turns: int) -> dict[str, Any]:
    sides: dict[str, tuple[Workspace, AgentLoop, ScriptedLLM]] = {}
    for name, count in (("10", 10), ("10000", 10_000)):
        workspace, llm = workspace_with(count), ScriptedLLM()
        sides[name] = (workspace, AgentLoop(workspace, llm, local_actions(), NoRouter()), llm)
    try:
        for _, loop, llm in sides.values():
            turn_times(loop, llm, 10)  # warm-up
        shown = {name: memory_lines(llm.prompts[-1]) for name, (_, _, llm) in sides.items()}
        per_round: list[dict[str, Any]] = []
        for index in range(rounds):
            order = ["10", "10000"] if index % 2 == 0 else ["10000", "10"]
            samples: dict[str, list[tuple[float, float]]] = {"10": [], "10000": []}
            for _ in range(2):
                for name in order:
                    _, loop, llm = sides[name]
                    samples[name] += turn_costs(loop, llm, turns // 2)
            p50 = {name: statistics.median(wall for wall, _ in values) for name, values in samples.items()}
            cpu = {name: statistics.median(c for _, c in values) for name, values in samples.items()}
            row = {"p50_ms_10": ms(p50["10"]), "p50_ms_10000": ms(p50["10000"]),
                   "ratio": round(p50["10000"] / p50["10"], 2),
                   "cpu_p50_ms_10": ms(cpu["10"]), "cpu_p50_ms_10000": ms(cpu["10000"]),
                   "cpu_ratio": round(cpu["10000"] / cpu["10"], 2),
                   "load_average": round(os.getloadavg()[0], 2)}
            per_round.append(row)
            print(f"round {index + 1}: wall clock p50 10 facts {row['p50_ms_10']} ms, 10,000 facts "
                  f"{row['p50_ms_10000']} ms, ratio {row['ratio']}; CPU time p50 {row['cpu_p50_ms_10']} ms, "
                  f"{row['cpu_p50_ms_10000']} ms, ratio {row['cpu_ratio']}; "
                  f"load average {row['load_average']}",
                  flush=True)
        common = {name: ms(statistics.median(turn_times(loop, llm, 20, COMMON_MESSAGE)))
                  for name, (_, loop, llm) in sides.items()}
        after_change = {}
        for name, (workspace, loop, llm) in sides.items():
            times = []
            for n in range(5):
                memory = workspace.load_memory() | facts(1, seed=n)
                write_memory(workspace, memory)  # another process adds a fact
                times += turn_times(loop, llm, 1)
            after_change[name] = ms(statistics.median(times))
        size = {name: workspace.memory_path.stat().st_size for name, (workspace, _, _) in sides.items()}
    finally:
        for workspace, _, _ in sides.values():
            shutil.rmtree(workspace.root, ignore_errors=True)
    ratios = [row["ratio"] for row in per_round]
    cpu_ratios = [row["cpu_ratio"] for row in per_round]
    return {
        "turns_per_side_per_round": turns,
        "message": MESSAGE,
        "memory_json_bytes": size,
        "entries_shown_in_the_prompt": shown,
        "rounds": per_round,
        "ratios": ratios,
        "median_ratio": round(statistics.median(ratios), 2),
        "target": "10,000 facts <= 1.2x 10 facts",
        "target_met_in_median": statistics.median(ratios) <= 1.2,
        "rounds_within_target": sum(r <= 1.2 for r in ratios),
        "cpu_ratios": cpu_ratios,
        "cpu_median_ratio": round(statistics.median(cpu_ratios), 2),
        "cpu_rounds_within_target": sum(r <= 1.2 for r in cpu_ratios),
        "message_sharing_a_word_with_every_fact_p50_ms": common,
        "first_turn_after_another_process_wrote_memory_p50_ms": after_change,
    }


def write_reply(n: int) -> str:
    fact = {f"fact_{n:04d}": f"the owner's note number {n}: tea at five, the blue notebook, call Sam"}
    return "Noted. <tool_code>" + json.dumps([{"name": "_MEMORY_WRITE", "params": {"new_memory": fact}}]) + (
        "</tool_code>")


def filling(turns: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    try:
        for name in TEMPLATES:
            shutil.copyfile(SHIPPED_WORKSPACE / name, root / name)
        workspace = Workspace(root, root / "logs")
        workspace.ensure()
        llm = ScriptedLLM()
        loop = AgentLoop(workspace, llm, local_actions(), NoRouter())
        samples: dict[int, dict[str, int]] = {}
        for turn in range(1, turns + 1):
            if turn % 10 == 0:
                llm.enqueue(write_reply(turn), "I will remember it.")
            else:
                llm.enqueue("Sure.")
            first = len(llm.prompts)
            loop.run_turn("console", f"message {turn}: what about the tea and the notebook?")
            if turn in (1, 10, 100, 500, 1000, turns) or turn % 500 == 0:
                prompt = llm.prompts[first]
                samples[turn] = {"chars": len(prompt), "tokens_estimated": estimate_tokens(prompt),
                                 "memory_entries": len(workspace.load_memory())}
        return {"turns": turns, "samples": samples}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=80, help="turns per side per round")
    parser.add_argument("--fill-turns", type=int, default=2000)
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average_at_start": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    result["facts_10_vs_10000"] = versus = small_vs_large(args.rounds, args.turns)
    print(f"10,000 vs 10 facts: wall clock ratio per round {versus['ratios']}, "
          f"median {versus['median_ratio']} "
          f"(target 1.2x: {'met' if versus['target_met_in_median'] else 'not met'} in the median, "
          f"{versus['rounds_within_target']} of {args.rounds} rounds within it); CPU time ratio per round "
          f"{versus['cpu_ratios']}, median {versus['cpu_median_ratio']} "
          f"({versus['cpu_rounds_within_target']} of {args.rounds} within 1.2)")
    print("a message sharing a word with every fact:",
          versus["message_sharing_a_word_with_every_fact_p50_ms"], "ms")
    print(f"first turn after another process wrote memory: "
          f"{versus['first_turn_after_another_process_wrote_memory_p50_ms']} ms")
    result["prompt_as_memory_fills"] = fill = filling(args.fill_turns)
    for turn, sample in fill["samples"].items():
        print(f"turn {turn:>5}: prompt {sample['chars']:>6} chars, ~{sample['tokens_estimated']:>5} tokens, "
              f"{sample['memory_entries']} memory entries")
    result["load_average_at_end"] = round(os.getloadavg()[0], 2)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
