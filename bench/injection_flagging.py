"""How well the injection flags hold on text nobody tuned them on, and what they cost.

    .venv/bin/python bench/injection_flagging.py

The detector (protocol/injection_detector.py) was trained on the train split and its threshold
picked on the tune split (scripts/injection_corpus.py says which text is where); this reads only
what it never saw: the test split of the texts written for this project (recall per kind of
injection, false positives on ordinary social posts) and three outside sets nobody built it on:
bastioncorpus (injections and hard ordinary texts), AgentDojo's benchmark (its attacks, and its
environments' emails, messages and reviews as ordinary text) and agent-injection-bench. Each set
is scored three ways: the detector, the old patterns alone, and the flag as the sanitiser raises
it (`injection_reasons`). Speed is CPU time per 2 KB text on one core (a feed of ordinary posts,
text in odd Unicode, a base64 wall), and for a 1 MB text. Prints every figure and every miss and
false alarm of the flag, and writes bench/results/injection_flagging.json.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.injection_detector import looks_injected, model  # noqa: E402
from protocol.injection_patterns import injection_reasons, pattern_reasons  # noqa: E402
from scripts import injection_corpus, public_injection_sets  # noqa: E402
from scripts.injection_samples import Sample  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "injection_flagging.json"
TARGET_RECALL, TARGET_FP, TARGET_MS = 0.85, 0.03, 2.0
ROUNDS = 5
Flagger = Callable[[str], bool]
FLAGGERS: dict[str, Flagger] = {
    "detector": looks_injected,
    "patterns": lambda text: bool(pattern_reasons(text)),
    "flag": lambda text: bool(injection_reasons(text)),
}


def held_out_sets() -> dict[str, list[Sample]]:
    return {
        "written test split": [s for s in injection_corpus.written() if s.split == "test"],
        "bastioncorpus": public_injection_sets.bastion(),
        "agentdojo": public_injection_sets.agentdojo(),
        "agent-injection-bench": public_injection_sets.agent_injection_bench(),
    }


def rates(samples: list[Sample], flagged: list[bool]) -> dict[str, Any]:
    injections = [f for s, f in zip(samples, flagged, strict=True) if s.injection]
    ordinary = [f for s, f in zip(samples, flagged, strict=True) if not s.injection]
    kinds: dict[str, list[bool]] = defaultdict(list)
    for sample, flag in zip(samples, flagged, strict=True):
        kinds[sample.kind].append(flag)
    return {
        "injections": len(injections),
        "recall": round(sum(injections) / len(injections), 4) if injections else None,
        "ordinary": len(ordinary),
        "false_positive_rate": round(sum(ordinary) / len(ordinary), 4) if ordinary else None,
        "per_kind": {
            kind: {"texts": len(flags), "flagged": sum(flags), "rate": round(sum(flags) / len(flags), 4)}
            for kind, flags in sorted(kinds.items())
        },
    }


def _feed_texts(posts: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        text = ""
        while len(text) < 2048:
            text += rng.choice(posts) + "\n"
        texts.append(text[:2048])
    return texts


def speed(posts: list[str]) -> dict[str, Any]:
    """CPU milliseconds per text, on one core (the process is pinned to one): process time, so
    waiting for the CPU does not count, over ROUNDS rounds of each set; `quiet_ms` is the mean
    of the quietest round (other work on a shared machine still slows every round: cache, the
    other half of a core), `mean_ms` and `p95_ms` those of every text of every round."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = random.Random(5)
    odd = [
        "".join(
            chr(rng.choice((rng.randint(0x80, 0x2FFF), rng.randint(0x1F300, 0x1FAFF)))) for _ in range(2048)
        )
        for _ in range(20)
    ]
    sets = {
        "feed_2kb": _feed_texts(posts, 300, 1),
        "odd_unicode_2kb": odd,
        "base64_wall_2kb": ["SWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM=" * 46 for _ in range(10)],
        "one_megabyte": ["ordinary words and more ordinary words " * 27_000],
    }
    out: dict[str, Any] = {}
    for name, texts in sets.items():
        for flagger in ("detector", "flag"):
            times: list[float] = []
            rounds = []
            for _ in range(ROUNDS):
                this_round = []
                for text in texts:
                    started = time.process_time()
                    FLAGGERS[flagger](text)
                    this_round.append((time.process_time() - started) * 1000)
                rounds.append(statistics.fmean(this_round))
                times += this_round
            out[f"{name}/{flagger}"] = {
                "quiet_ms": round(min(rounds), 3),
                "mean_ms": round(statistics.fmean(times), 3),
                "p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 3),
            }
    return out


def measure() -> dict[str, Any]:
    detector = model()
    result: dict[str, Any] = {
        "threshold": detector.threshold,
        "weights": len(detector.weights),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "missing_packages": injection_corpus.missing(),
        "sets": {},
        "mistakes": {},
    }
    sets = held_out_sets()
    for name, samples in sets.items():
        if not samples:
            continue
        result["sets"][name] = {}
        for flagger, flag in FLAGGERS.items():
            flags = [flag(s.text) for s in samples]
            result["sets"][name][flagger] = rates(samples, flags)
            if flagger == "flag":
                result["mistakes"][name] = [
                    {"kind": s.kind, "missed" if s.injection else "false_alarm": s.text[:300]}
                    for s, f in zip(samples, flags, strict=True)
                    if f != s.injection
                ]
    posts = [s.text for s in sets["written test split"] if not s.injection]
    result["speed"] = speed(posts)
    written = result["sets"]["written test split"]["flag"]
    result["targets"] = {
        "recall": [TARGET_RECALL, written["recall"]],
        "false_positive_rate": [TARGET_FP, written["per_kind"]["ordinary_posts"]["rate"]],
        "ms_per_2kb": [TARGET_MS, result["speed"]["feed_2kb/flag"]["quiet_ms"]],
    }
    return result


def _line(name: str, figures: dict[str, Any]) -> str:
    recall = "-" if figures["recall"] is None else f"{figures['recall']:.1%} of {figures['injections']}"
    fp = (
        "-"
        if figures["false_positive_rate"] is None
        else f"{figures['false_positive_rate']:.1%} of {figures['ordinary']}"
    )
    return f"  {name:10} recall {recall:16} false positives {fp}"


def main() -> None:
    result = measure()
    if result["missing_packages"]:
        print("not installed (their sets are left out):", ", ".join(result["missing_packages"]))
    print(
        f"detector: {result['weights']} weights, threshold {result['threshold']:.3f}; "
        f"load average at start {result['load_average_at_start']} on {os.cpu_count()} cores"
    )
    for name, by_flagger in result["sets"].items():
        print(name)
        for flagger, figures in by_flagger.items():
            print(_line(flagger, figures))
        kinds = by_flagger["flag"]["per_kind"]
        print("    flag per kind: " + ", ".join(f"{k} {v['flagged']}/{v['texts']}" for k, v in kinds.items()))
    for name, mistakes in result["mistakes"].items():
        for mistake in mistakes:
            what = "missed" if "missed" in mistake else "false_alarm"
            print(f"  {name}: {what} ({mistake['kind']}): {mistake[what][:160]!r}")
    print("speed, CPU ms per text:")
    for name, figures in result["speed"].items():
        print(f"  {name:28} quietest round {figures['quiet_ms']:8.3f}   mean {figures['mean_ms']:8.3f}   "
              f"p95 {figures['p95_ms']:8.3f}")
    targets = result["targets"]
    print(
        f"targets on the written test split: recall {targets['recall'][1]:.1%} (>= {TARGET_RECALL:.0%}), "
        f"false positives on social posts {targets['false_positive_rate'][1]:.1%} (<= {TARGET_FP:.0%}), "
        f"{targets['ms_per_2kb'][1]:.2f} ms per 2 KB in the quietest round (<= {TARGET_MS} ms)"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
