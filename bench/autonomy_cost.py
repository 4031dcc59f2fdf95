#!/usr/bin/env python3
"""LLM calls and tokens per autonomy cycle, for a quiet feed and a busy one.

Real redis-server, a real router (every skill, the Moltbook key) and the Moltbook fake; the
agent's own cycle drives an LLM that always wants to post (tokens counted one per word, as the
scripted provider does). The USD column prices those tokens as gpt-4o-mini would.

    python bench/autonomy_cost.py [--cycles 30]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from agent.cost.prices import price_of  # noqa: E402
from tests.support.autonomy_stack import AutonomyStack, autonomy_stack  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "autonomy_cost.json"
BUSY_NEW_POSTS = 3  # new posts in the feed before each busy cycle
PRICE = price_of("openai", "gpt-4o-mini", {})


def run(stack: AutonomyStack, cycles: int, new_posts: int) -> dict[str, Any]:
    cost_log = stack.workspace / "logs" / "cost.jsonl"
    start_line = len(cost_log.read_text().splitlines()) if cost_log.exists() else 0
    reports, started = [], time.perf_counter()
    for _ in range(cycles):
        stack.add_posts(new_posts)
        reports.append(stack.cycle.run_once())
        stack.clock.advance(1800)
    elapsed = time.perf_counter() - started
    calls = (
        [json.loads(line) for line in cost_log.read_text().splitlines()[start_line:]]
        if cost_log.exists()
        else []
    )
    tokens_in = sum(c["input_tokens"] for c in calls)
    tokens_out = sum(c["output_tokens"] for c in calls)
    return {
        "cycles": cycles,
        "new_posts_per_cycle": new_posts,
        "outcomes": {o: sum(r.outcome == o for r in reports) for o in sorted({r.outcome for r in reports})},
        "llm_calls_per_cycle": round(statistics.mean(r.llm_calls for r in reports), 2),
        "tokens_per_cycle": round(statistics.mean(r.tokens for r in reports), 1),
        "input_tokens_per_cycle": round(tokens_in / cycles, 1),
        "output_tokens_per_cycle": round(tokens_out / cycles, 1),
        "usd_per_cycle_as_gpt_4o_mini": round(PRICE.usd(tokens_in, tokens_out) / cycles, 6),
        "usd_per_day_at_1800s_as_gpt_4o_mini": round(PRICE.usd(tokens_in, tokens_out) / cycles * 48, 4),
        "seconds_per_cycle": round(elapsed / cycles, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=30)
    args = parser.parse_args()
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()}
    }
    with tempfile.TemporaryDirectory(prefix="safeclaw-bench-") as tmp, autonomy_stack(Path(tmp)) as stack:
        stack.add_posts(5)
        stack.cycle.run_once()  # the first cycle reads what is already there
        stack.clock.advance(1800)
        results["quiet_feed"] = run(stack, args.cycles, 0)
        results["busy_feed"] = run(stack, args.cycles, BUSY_NEW_POSTS)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
