"""Benchmark: the router's hard bounds (quota, pacing, duplicate guard, circuit) per command.

Starts its own redis-server (ACL users, no persistence), fills one platform's sent-text history
with N texts of a given length (the duplicate guard compares a new text's fingerprint with each
of them, and measures exactly only those the fingerprints cannot rule out), then
times `HardBounds.check` + `record` for new texts, as the router user. Also times the guard's
similarity measure alone, and the fingerprints' bound it compares first. Prints the figures and
writes bench/results/bounds_check.json.

Usage: .venv/bin/python bench/bounds_check.py [--checks 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import string
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import redis  # noqa: E402

from protocol.keys import Keys  # noqa: E402
from router.bounds.fingerprints import Fingerprint  # noqa: E402
from router.bounds.guard import HardBounds  # noqa: E402
from router.bounds.settings import BoundsSettings  # noqa: E402
from router.bounds.text_trigrams import similarity, trigrams  # noqa: E402
from router.policy.effects import Effect  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

KEYS = Keys()

RESULTS = REPO_ROOT / "bench" / "results" / "bounds_check.json"
PREFIX = KEYS.router_prefix


def text_of(rng: random.Random, length: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < length:
        words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9))))
    return " ".join(words)[:length]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
    }


def one_case(server: RedisServer, history: int, length: int, checks: int) -> dict[str, Any]:
    admin = server.admin_client()
    admin.flushall()
    admin.close()
    settings = BoundsSettings.from_env({"ROUTER_QUOTAS": "post=100000", "ROUTER_PACING": "bsky:post=0"})
    bounds = HardBounds(settings, PREFIX, KEYS.owner_notices)
    rng = random.Random(history * 7919 + length)
    conn = redis.Redis.from_url(server.router_url, decode_responses=False)  # as the worker
    now = time.time()
    for i in range(history):
        effect = Effect("bsky", "post", text_of(rng, length))
        bounds.check(conn, effect, f"fill-{i}", now - 3600 + i * 0.01)
        bounds.record(conn, effect, f"fill-{i}", "ok", None, now)
    samples = []
    for i in range(checks):
        effect = Effect("bsky", "post", text_of(rng, length))
        start = time.perf_counter()
        refused = bounds.check(conn, effect, f"c-{i}", now)
        bounds.record(conn, effect, f"c-{i}", "error", "not_found", now)  # gives the text back
        samples.append(time.perf_counter() - start)
        assert refused is None, refused
    conn.close()
    return {"history_texts": history, "text_chars": length, "checks": checks, **percentiles(samples)}


def similarity_figure(length: int, pairs: int = 2000) -> dict[str, Any]:
    """The exact measure of two texts' trigram sets against the fingerprints' bound the guard
    compares first (only a pair the bound lets through is measured exactly)."""
    rng = random.Random(length)
    sets = [trigrams(text_of(rng, length)) for _ in range(pairs + 1)]
    prints = [Fingerprint.of(grams) for grams in sets]
    start = time.perf_counter()
    for i in range(pairs):
        similarity(sets[i], sets[i + 1])
    per_pair = (time.perf_counter() - start) / pairs
    start = time.perf_counter()
    for i in range(pairs):
        prints[i].overlap_bound(prints[i + 1])
    per_bound = (time.perf_counter() - start) / pairs
    return {"text_chars": length, "us_per_comparison": round(per_pair * 1e6, 2),
            "us_per_fingerprint_bound": round(per_bound * 1e6, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=200)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    server.start()
    try:
        cases = [one_case(server, h, n, args.checks) for n in (300, 2000) for h in (0, 175, 875)]
    finally:
        server.cleanup()
    similarities = [similarity_figure(300), similarity_figure(2000)]
    figures: dict[str, Any] = {
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "note": "check + record of one post through all four bounds, as the router user; history = "
        "texts sent on the platform in the last 7 days (175: the default quotas' week on one platform)",
        "cases": cases,
        "similarity": similarities,
    }
    print(f"{'history':>8} {'chars':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for case in cases:
        print(f"{case['history_texts']:>8} {case['text_chars']:>6} {case['p50_ms']:>8} {case['p99_ms']:>8}")
    for sim in similarities:
        print(f"two {sim['text_chars']}-char texts: similarity {sim['us_per_comparison']} us, "
              f"the fingerprints' bound {sim['us_per_fingerprint_bound']} us")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
