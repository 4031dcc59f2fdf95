"""Benchmark: a post's latency through a router on one Redis, against the same with one replica and
ROUTER_REDIS_MIN_REPLICAS=1 (the claim WAITed onto the replica before the post, the done record
before the reply: router/queue/replica_wait.py).

Two routers (`router/start_router.py`), each on a Redis of its own with the same configuration
(AOF, fsync always; `tests/support/sentinel_redis.MemberServer`): `single` on a primary alone with
no wait, `replicated` on a primary with one replica in sync and the wait. Both post to the same
fake Mastodon, served by a process of its own (`bench/own_process.py`). Each of `--rounds` rounds
holds `--posts` posts a side in short blocks that alternate, the order turned each block, so load
from elsewhere falls on both; each round's p50s and ratio are printed with the load average.

Target: `replicated` at most 1.3x `single` (p50). Prints the figures and writes
bench/results/replica_wait_cost.json.
Usage: .venv/bin/python bench/replica_wait_cost.py [--posts 40] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import redis  # noqa: E402

from bench.own_process import FakeAddress, mastodon_in_its_own_process  # noqa: E402
from bench.router_post import TOKEN, call, p50_ms, posted, router_env  # noqa: E402
from tests.support.sentinel_redis import MemberServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "replica_wait_cost.json"
TARGET = 1.3


def start_router(server: MemberServer, masto: FakeAddress, data_dir: Path,
                 min_replicas: int) -> subprocess.Popen[bytes]:
    env = {**router_env(server, masto, data_dir), "ROUTER_REDIS_MIN_REPLICAS": str(min_replicas),
           "ROUTER_REDIS_REPLICA_TIMEOUT_MS": "1000"}
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file", "/nonexistent.env"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def replica_in_sync(admin: redis.Redis) -> bool:
    info = admin.info("replication")
    return bool(info.get("connected_slaves") == 1 and info["slave0"]["state"] == "online")


def wait_for(predicate: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what}")
        time.sleep(0.05)


def one_round(sides: dict[str, Any], posts: int, blocks: int, turn: int) -> dict[str, float]:
    names = list(sides)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for block in range(blocks):
        shift = (turn + block) % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name] += sides[name](posts // blocks)
    single, replicated = p50_ms(samples["single"]), p50_ms(samples["replicated"])
    found = {"single_p50_ms": single, "replicated_p50_ms": replicated,
             "ratio": round(replicated / single, 2), "load_average": round(os.getloadavg()[0], 2)}
    print(f"round {turn + 1}: one Redis {single} ms, one replica and MIN_REPLICAS=1 {replicated} ms "
          f"({found['ratio']}x), load average {found['load_average']}", flush=True)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=40, help="posts a side in each round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(1)
    alone, primary = MemberServer(), MemberServer()
    replica = MemberServer(primary, (f"replicaof 127.0.0.1 {primary.port}",))
    servers = (alone, primary, replica)
    routers: list[subprocess.Popen[bytes]] = []
    load_before = os.getloadavg()
    try:
        for server in servers:
            server.start()
        admins = {"single": alone.admin_client(), "replicated": primary.admin_client()}
        wait_for(lambda: replica_in_sync(admins["replicated"]), "the replica in sync")
        with mastodon_in_its_own_process(TOKEN) as masto, tempfile.TemporaryDirectory(
                prefix="safeclaw-bench-replica-") as folder:
            for name, server, needed in (("single", alone, 0), ("replicated", primary, 1)):
                (Path(folder) / name).mkdir()
                routers.append(start_router(server, masto, Path(folder) / name, needed))
            on = {"single": alone, "replicated": primary}
            for name, admin in admins.items():
                wait_for(lambda admin=admin, name=name: call(admin, on[name], "PING", {})["status"] == "ok",
                         f"the {name} router")
            sides = {name: (lambda count, name=name: posted(admins[name], on[name], count, rng))
                     for name in admins}
            for run in sides.values():  # warm-up: imports, the platform client, the connections
                run(10)
            rounds = [one_round(sides, args.posts, 4, turn) for turn in range(args.rounds)]
    finally:
        for router in routers:
            router.terminate()
            router.wait(timeout=30)
        for server in servers:
            server.cleanup()
    figures = {
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "fake_mastodon": "its own process",
        "posts_a_side_a_round": args.posts,
        "rounds": rounds,
        "replicated_over_single_median": statistics.median(r["ratio"] for r in rounds),
        "target": TARGET,
    }
    print(json.dumps(figures, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
