"""Time the embedded model: load, then a few prompts (seconds per reply, tokens/s, peak RSS).

    .venv/bin/python bench/llm_local.py     # prints a table, writes bench/results/llm_local.json
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.config_sections import LLMSettings
from agent.llm.local.llm import LocalLLM

PROMPTS = [
    "What is the capital of France? Answer in one word.",
    "List three colours, comma separated.",
    "Write two sentences about why the sky is blue.",
    # about the size of a real agent prompt: a long preamble, then the question
    "You are a helpful agent. " * 300 + "\nIn one sentence: what are you?",
]
RESULTS = Path(__file__).resolve().parent / "results" / "llm_local.json"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def run() -> dict[str, Any]:
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
    started = time.perf_counter()
    llama = llm._loaded()  # the load is what we time here
    load_s = time.perf_counter() - started
    replies = []
    for prompt in PROMPTS:
        prompt_tokens = len(llama.tokenize(prompt.encode()))
        started = time.perf_counter()
        text = llm.chat(prompt)
        seconds = time.perf_counter() - started
        reply_tokens = len(llama.tokenize(text.encode(), add_bos=False))
        replies.append({
            "prompt_tokens": prompt_tokens,
            "reply_tokens": reply_tokens,
            "seconds": round(seconds, 3),
            "reply_tokens_per_s": round(reply_tokens / seconds, 1) if seconds else None,
            "all_tokens_per_s": round((prompt_tokens + reply_tokens) / seconds, 1) if seconds else None,
            "reply_start": text[:80],
        })
    return {
        "model": llm.path.name if llm.path else llm.model,
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
                   f"Python {platform.python_version()}",
        "load_seconds": round(load_s, 3),
        "replies": replies,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def main() -> int:
    result = run()
    print(f"model {result['model']}\nload {result['load_seconds']} s, peak RSS {result['peak_rss_mb']} MB")
    print(f"{'prompt tok':>10} {'reply tok':>10} {'seconds':>8} {'reply/s':>7} {'all/s':>7}  reply")
    for r in result["replies"]:
        print(f"{r['prompt_tokens']:>10} {r['reply_tokens']:>10} {r['seconds']:>8} "
              f"{r['reply_tokens_per_s']!s:>7} {r['all_tokens_per_s']!s:>7}  {r['reply_start']!r}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
