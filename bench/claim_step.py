"""Benchmark: a post's claim and bounds, three ways, on one redis-server as the router user.

- `fused` (the router's): the reads ahead of the policy (record, fingerprint, kill switch) and the
  claim's script (`router.queue.claim_step`: SET NX, then the four bounds only when won) in one
  pipeline: one round trip, atomic;
- `two_trips`: the reads and the claim (SET NX) in one pipeline, then the bounds in a second one
  when the claim was won: atomic by order, one round trip more;
- `unfused_old`: the reads, the bounds and the claim side by side in one pipeline (the code before
  the script): one round trip, not atomic (copies each took a share).

Alternating rounds (a burst of load falls on every way), each round's p50 per claim and the
ratios to `unfused_old` printed with the load average. What it shows: whether fusing the claim
into the reads' round trip matters (`two_trips` against `fused`), and what the script costs over
the plain pipeline (`fused` against `unfused_old`). Writes bench/results/claim_step.json.
Usage: .venv/bin/python bench/claim_step.py [--claims 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import redis  # noqa: E402

from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from protocol.origin import OWNER, Origin  # noqa: E402
from router.bounds.guard import HardBounds  # noqa: E402
from router.bounds.settings import BoundsSettings  # noqa: E402
from router.config.settings import RouterSettings  # noqa: E402
from router.policy.effects import Effect  # noqa: E402
from router.queue.claim_step import execute  # noqa: E402
from router.queue.records import CommandRecords  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

KEYS = Keys()

RESULTS = REPO_ROOT / "bench" / "results" / "claim_step.json"
WORDS = ("river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window")


class Ways:
    def __init__(self, conn: redis.Redis, records: CommandRecords, bounds: HardBounds) -> None:
        self.conn, self.records, self.bounds = conn, records, bounds

    def reads(self, pipe: Any, envelope: CommandEnvelope) -> None:
        self.records.queue_stored(pipe, envelope)
        pipe.get(self.records.keys.kill_switch)

    def fused(self, envelope: CommandEnvelope, effect: Effect, now: float) -> Any:
        pipe = self.conn.pipeline(transaction=False)
        self.reads(pipe, envelope)
        claim = self.records.claim_of(envelope)
        gated = claim.commands()
        staged = self.bounds.stage_check(gated, effect, now)
        ride = claim.stage(pipe, gated)
        answers = ride.settle(self.conn, execute(pipe)[3:])
        return staged.settle(self.conn, answers) if isinstance(answers, list) else None

    def two_trips(self, envelope: CommandEnvelope, effect: Effect, now: float) -> Any:
        pipe = self.conn.pipeline(transaction=False)
        self.reads(pipe, envelope)
        claim = self.records.claim_of(envelope)
        ride = claim.stage(pipe)
        ride.settle(self.conn, pipe.execute()[3:])
        if not claim.won:
            return None
        pipe = self.conn.pipeline(transaction=False)
        staged = self.bounds.stage_check(pipe, effect, now)
        return staged.take(self.conn, pipe)

    def unfused_old(self, envelope: CommandEnvelope, effect: Effect, now: float) -> Any:
        pipe = self.conn.pipeline(transaction=False)
        self.reads(pipe, envelope)
        staged = self.bounds.stage_check(pipe, effect, now)
        ride = self.records.claim_of(envelope).stage(pipe)
        answers = pipe.execute()
        ride.settle(self.conn, answers[3 + staged.count:])
        return staged.settle(self.conn, answers[3 : 3 + staged.count])


def timed(way: Callable[[CommandEnvelope, Effect, float], Any], claims: int, rng: random.Random) -> float:
    samples = []
    for _ in range(claims):
        text = " ".join(rng.choice(WORDS) for _ in range(24)) + f" {rng.random()}"
        envelope = CommandEnvelope.new("CREATE_POST", {"platform": "mastodon", "text": text}, "t", 60,
                                       origin=Origin(OWNER, "console"))
        effect = Effect("mastodon", "post", text)
        start = time.perf_counter()
        held = way(envelope, effect, time.time())
        samples.append(time.perf_counter() - start)
        if held is None or not hasattr(held, "quota"):
            raise RuntimeError(f"a claim was refused: {held}")
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=300, help="claims a way in each round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = RedisServer(persistent=True)  # the router's durability: AOF, fsync always
    server.start()
    rng = random.Random(1)
    try:
        conn = redis.Redis.from_url(server.router_url, decode_responses=False)
        with tempfile.TemporaryDirectory() as folder:
            settings = RouterSettings.from_env({"REDIS_URL": server.router_url, "ROUTER_DATA_DIR": folder})
        bounds = HardBounds(BoundsSettings.from_env({"ROUTER_QUOTAS": "post=10000000"}), KEYS.router_prefix,
                            KEYS.owner_notices)
        ways = Ways(conn, CommandRecords(conn, settings), bounds)
        order = [("fused", ways.fused), ("two_trips", ways.two_trips), ("unfused_old", ways.unfused_old)]
        timed(ways.fused, 20, rng)  # warm-up: the script loaded, the guard's history read
        rounds = []
        for n in range(args.rounds):
            turn = order[n % 3:] + order[: n % 3]  # each way first in some round
            p50 = {name: timed(way, args.claims, rng) for name, way in turn}
            rounds.append({**{f"{k}_p50_ms": round(v, 3) for k, v in p50.items()},
                           "fused_over_unfused_old": round(p50["fused"] / p50["unfused_old"], 2),
                           "two_trips_over_fused": round(p50["two_trips"] / p50["fused"], 2),
                           "load_average": round(os.getloadavg()[0], 2)})
            print(rounds[-1])
        conn.close()
    finally:
        server.cleanup()
    figures = {
        "claims_a_way_a_round": args.claims,
        "rounds": rounds,
        "fused_over_unfused_old_median": statistics.median(r["fused_over_unfused_old"] for r in rounds),
        "two_trips_over_fused_median": statistics.median(r["two_trips_over_fused"] for r in rounds),
    }
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if k != "rounds"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
