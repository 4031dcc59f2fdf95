"""Recall and false-positive rate of `protocol.untrusted` injection flagging on the test corpus.

    .venv/bin/python bench/injection_flagging.py

Prints recall, false-positive rate, flagging speed and every miss and false alarm, and writes
bench/results/injection_flagging.json. The corpus (tests/data/injections.txt and
tests/data/ordinary_posts.txt) was written together with the patterns, so these are in-sample
figures: an upper bound on what unseen text will show. The flag is a signal, never the guard.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.untrusted import injection_reasons  # noqa: E402

DATA = ROOT / "tests" / "data"
RESULTS = ROOT / "bench" / "results" / "injection_flagging.json"


def load(name: str) -> list[str]:
    """One text per non-empty line; \\uXXXX escapes (the hidden-unicode cases) decoded."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    unescape = re.compile(r"\\u([0-9a-fA-F]{4})")
    return [unescape.sub(lambda m: chr(int(m.group(1), 16)), line) for line in lines if line.strip()]


def measure() -> dict[str, Any]:
    injections, ordinary = load("injections.txt"), load("ordinary_posts.txt")
    started = time.perf_counter()
    injection_hits = [(text, injection_reasons(text)) for text in injections]
    ordinary_hits = [(text, injection_reasons(text)) for text in ordinary]
    elapsed = time.perf_counter() - started
    missed = [text for text, reasons in injection_hits if not reasons]
    false_alarms = [{"text": text, "reasons": reasons} for text, reasons in ordinary_hits if reasons]
    reasons = Counter(reason for _, found in injection_hits for reason in found)
    return {
        "injections": len(injections),
        "ordinary": len(ordinary),
        "recall": round(1 - len(missed) / len(injections), 4),
        "false_positive_rate": round(len(false_alarms) / len(ordinary), 4),
        "missed": missed,
        "false_alarms": false_alarms,
        "reasons_on_injections": dict(reasons.most_common()),
        "microseconds_per_text": round(elapsed / (len(injections) + len(ordinary)) * 1e6, 1),
    }


def main() -> None:
    result = measure()
    print(f"injections {result['injections']}, ordinary posts {result['ordinary']}")
    print(f"recall {result['recall']:.3f}   false-positive rate {result['false_positive_rate']:.3f}   "
          f"{result['microseconds_per_text']} µs per text")
    for text in result["missed"]:
        print(f"  missed: {text}")
    for alarm in result["false_alarms"]:
        print(f"  false alarm ({', '.join(alarm['reasons'])}): {alarm['text']}")
    print("reasons on injections:", ", ".join(f"{k} {v}" for k, v in result["reasons_on_injections"].items()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
