"""Where the explainer's "restates the post" threshold sits: similarity of background bullets and
of restatements to their post, on the eval dataset.

    .venv/bin/python bench/explain_similarity.py

Background bullets are the final answers recorded in evals/data/explain_dataset.json.
Restatements are made from each post mechanically (verbatim with a citation, with a lead-in,
every fifth word dropped, the two halves swapped, lower-cased without punctuation, upper-cased,
full-width, zero-width characters between letters, emoji between words, Cyrillic look-alikes,
padded inside a longer bullet, swapped and padded). Prints both
distributions, the errors at the threshold, and the time per check; writes
bench/results/explain_similarity.json. In-sample figures: the threshold was set on this data.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.explain.checks import RESTATE_THRESHOLD, similarity  # noqa: E402
from evals.dataset import load_dataset  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "explain_similarity.json"


_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}
_CYRILLIC = str.maketrans("aeopcx", "аеорсх")


def restatements(post: str) -> list[str]:
    words = post.split()
    half = len(words) // 2
    return [
        post + " [1]",
        "The author says that " + post + " [2]",
        " ".join(w for i, w in enumerate(words) if i % 5 != 4) + " [1]",
        " ".join(words[half:] + words[:half]) + " [1]",
        "".join(c for c in post.lower() if c.isalnum() or c.isspace()) + " [3]",
        post.upper() + " [1]",
        "".join(_FULL_WIDTH.get(c, c) for c in post) + " [1]",
        "\u200b".join(post) + " [1]",
        "🔥".join(words) + " [1]",
        post.translate(_CYRILLIC) + " [1]",
        "Background: the post says " + post + ", which is how people talk about it online [2]",
        "Put simply, " + " ".join(words[half:] + words[:half]) + " is what this is about [2]",
    ]


def final_bullets(script: list[dict[str, Any]]) -> list[str]:
    finishes = [step["bullets"] for step in script if step.get("action") == "finish"]
    return finishes[-1] if finishes else []


def main() -> int:
    background: list[float] = []
    restated: list[float] = []
    started = time.perf_counter()
    checks = 0
    for item in load_dataset():
        post = item.post(item.target)["text"]
        for bullet in final_bullets(item.script):
            background.append(similarity(bullet, post))
        for text in restatements(post):
            restated.append(similarity(text, post))
        checks += len(final_bullets(item.script)) + len(restatements(post))
    seconds = time.perf_counter() - started
    figures = {
        "threshold": RESTATE_THRESHOLD,
        "background_bullets": len(background),
        "background_max": round(max(background), 3),
        "background_mean": round(sum(background) / len(background), 3),
        "background_flagged": sum(1 for s in background if s >= RESTATE_THRESHOLD),
        "restatements": len(restated),
        "restatement_min": round(min(restated), 3),
        "restatement_mean": round(sum(restated) / len(restated), 3),
        "restatements_missed": sum(1 for s in restated if s < RESTATE_THRESHOLD),
        "microseconds_per_check": round(seconds / checks * 1e6, 1),
    }
    for key, value in figures.items():
        print(f"{key:24} {value}")
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
