"""Events per second through the Bluesky listener's filter, on one core.

    .venv/bin/python bench/jetstream_filter.py [--events 200000] [--rounds 5]

The filter is what the listener runs on every Jetstream message before anything is queued:
`PostFilter.read` (is it a created post that mentions a watched DID or replies to one of its
posts?) and, for comparison, the full parse of every event (`read_event` then
`Post.addresses`), against the floor: `json.loads` of every event, the least any listener does.
The three run in `--rounds` rounds, their order turned each round; each round's time over the
floor's is printed with the load average. The stream is synthetic but shaped like Jetstream's
`app.bsky.feed.post` stream: compact JSON as the Go server writes it; mostly created posts (with
facets, langs, replies, embeds), some deletes, identity and account events; 1 in 1,000 addresses
the owner.
The whole network is about 10,000 events/s; the target is at least 50,000 events/s.
Writes bench/results/jetstream_filter.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.channels.jetstream import POST_COLLECTION, PostFilter, read_event  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "jetstream_filter.json"
OWNER = "did:plc:owner7tq3ewyfzbdkhypsthiw"
TARGET = 50_000
WORDS = (
    "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are",
    "with", "as", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "word",
    "but", "what", "some", "we", "can", "out", "other", "were", "all", "there", "when", "up", "use",
    "your", "how", "said", "an", "each", "she", "which", "do", "their", "time", "if", "will", "way",
    "about", "many", "then", "them", "write", "would", "like", "so", "these", "her", "long", "make",
    "see", "him", "two", "has", "look", "more", "day", "could", "go", "come", "did", "number", "sound",
    "no", "most", "people", "my", "over", "know", "water", "than"
)


def did(rng: random.Random) -> str:
    return "did:plc:" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(24))


def post(rng: random.Random, time_us: int, addressed: bool) -> dict[str, Any]:
    author = did(rng)
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 45)))
    record: dict[str, Any] = {
        "$type": POST_COLLECTION,
        "createdAt": "2026-11-22T21:00:00.000Z",
        "langs": ["en"],
        "text": text,
    }
    kind = rng.random()
    mentioned = OWNER if addressed and kind < 0.5 else did(rng)
    if kind < 0.3 or addressed:
        record["facets"] = [
            {
                "$type": "app.bsky.richtext.facet",
                "index": {"byteStart": 0, "byteEnd": 12},
                "features": [{"$type": "app.bsky.richtext.facet#mention", "did": mentioned}],
            }
        ]
    if kind > 0.6 or (addressed and kind >= 0.5):
        parent_did = OWNER if addressed else did(rng)
        ref = {"cid": "bafyreib" + "x" * 51, "uri": f"at://{parent_did}/{POST_COLLECTION}/3kabcdefgh2xy"}
        record["reply"] = {"parent": ref, "root": ref}
    if 0.45 < kind < 0.6:
        record["embed"] = {
            "$type": "app.bsky.embed.external",
            "external": {
                "description": text[:80],
                "title": "A link",
                "uri": "https://example.org/" + "a" * 30,
            },
        }
    return {
        "did": author,
        "time_us": time_us,
        "kind": "commit",
        "commit": {
            "rev": "3lb2xyzabcd2a",
            "operation": "create",
            "collection": POST_COLLECTION,
            "rkey": "3lb2" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(9)),
            "record": record,
            "cid": "bafyreia" + "y" * 52,
        },
    }


def event(rng: random.Random, time_us: int) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.001:
        return post(rng, time_us, addressed=True)
    if roll < 0.85:
        return post(rng, time_us, addressed=False)
    if roll < 0.95:
        return {
            "did": did(rng),
            "time_us": time_us,
            "kind": "commit",
            "commit": {
                "rev": "3lb2xyzabcd2b",
                "operation": "delete",
                "collection": POST_COLLECTION,
                "rkey": "3lb2abcdefghi",
            },
        }
    if roll < 0.98:
        return {
            "did": did(rng),
            "time_us": time_us,
            "kind": "identity",
            "identity": {
                "did": did(rng),
                "handle": "someone.bsky.social",
                "seq": 1,
                "time": "2026-11-22T21:00:00.000Z",
            },
        }
    return {
        "did": did(rng),
        "time_us": time_us,
        "kind": "account",
        "account": {"active": True, "did": did(rng), "seq": 2, "time": "2026-11-22T21:00:00.000Z"},
    }


def stream(count: int) -> list[str]:
    rng = random.Random(14)
    start = 1_763_845_200_000_000
    return [
        json.dumps(event(rng, start + i * 100), separators=(",", ":"), ensure_ascii=False)
        for i in range(count)
    ]


def run_filter(raws: list[str]) -> tuple[float, int]:
    watched = frozenset({OWNER})
    post_filter = PostFilter(watched)
    started = time.perf_counter()
    matched = sum(1 for raw in raws if post_filter.read(raw).post is not None)
    return time.perf_counter() - started, matched


def run_json_loads(raws: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    parsed = sum(1 for raw in raws if json.loads(raw))
    return time.perf_counter() - started, parsed


def run_full_parse(raws: list[str]) -> tuple[float, int]:
    watched = frozenset({OWNER})
    started = time.perf_counter()
    matched = 0
    for raw in raws:
        found = read_event(raw).post
        if found is not None and found.addresses(watched):
            matched += 1
    return time.perf_counter() - started, matched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    raws = stream(args.events)
    average_bytes = sum(len(r.encode()) for r in raws) / len(raws)
    results: dict[str, Any] = {
        "events": len(raws),
        "average_event_bytes": round(average_bytes),
        "target_events_per_second": TARGET,
        "python": platform.python_version(),
    }
    sides = {"json_loads": run_json_loads, "filter": run_filter, "full_parse": run_full_parse}
    names = list(sides)
    times: dict[str, list[float]] = {name: [] for name in sides}
    matched: dict[str, int] = {}
    per_round = []
    for turn in range(args.rounds):
        for name in names[turn % 3:] + names[: turn % 3]:
            took, matched[name] = sides[name](raws)
            times[name].append(took)
        floor = times["json_loads"][-1]
        per_round.append({"filter_over_json_loads": round(times["filter"][-1] / floor, 2),
                          "full_parse_over_json_loads": round(times["full_parse"][-1] / floor, 2),
                          "load_average": round(os.getloadavg()[0], 2)})
        print(f"round {turn + 1}: filter {per_round[-1]['filter_over_json_loads']}x json.loads, full parse "
              f"{per_round[-1]['full_parse_over_json_loads']}x, load average {per_round[-1]['load_average']}")
    for name in names:
        best = min(times[name])
        results[name] = {
            "events_per_second": round(len(raws) / best),
            "matched": matched[name],
            "microseconds_per_event": round(best / len(raws) * 1e6, 2),
        }
        print(f"{name:10s} {len(raws) / best:>10,.0f} events/s (best round)")
    results["rounds"] = per_round
    assert results["filter"]["matched"] == results["full_parse"]["matched"], "the filters disagree"
    results["meets_target"] = results["filter"]["events_per_second"] >= TARGET
    print(f"target {TARGET:,} events/s: {'met' if results['meets_target'] else 'NOT met'}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"saved {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
