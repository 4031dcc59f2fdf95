"""Benchmark: the router's PING round trip against a floor, and what a hanging platform costs.

The floor is a minimal worker on the same Redis: BLMOVE a command into its processing list, push
the reply, drop the processing entry - nothing else - called by the least a client can do: raw
redis-py LPUSH of a minimal command and BLPOP of its reply. The routers are called as the agent
calls them (`agent.link.router_client.RouterClient`), logged in alike. Routers and floor workers
run side by side for the whole run, each on a queue of its own (the floor's is `FLOOR_QUEUE`),
from the same client processes (several, so that the clients are not what limits the figure).
On a shared machine the load moves within seconds, so router and floor are measured in turns,
`--rounds` times (the order swapped each round), and each round gives a ratio, printed with the
load average as it comes; the median ratio and every round's are reported:

- latency: PING p50/p99 of one client calling in sequence, one router vs one floor worker, in
  five short blocks of each side per round, alternating (target: p50 at most 1.3x the floor's in
  the median round);
- throughput: PING/s of three routers vs three floor workers under 4 client processes, in
  three short blocks of each side per round, alternating, so that a burst of load elsewhere
  falls on both (target: at least 80% of the floor's in every round);
- hang: PING p50 while commands to a hanging platform are in flight (target: within 2x);
- bursts: 2, 4 and 8 PINGs pushed at once to an idle router, 30 times each: how many bursts
  held a command half a second or more (a router blocking with commands in hand held one ~1 s);
- profile: where one router PING's time goes (cProfile over many PINGs, in process).

The workers and the floor are in `router_workers.py`, the clients in `router_load.py`, the profile in
`router_ping_profile.py`. Prints the figures and writes bench/results/router_roundtrip.json.
Usage: .venv/bin/python bench/router_roundtrip.py [--calls 1000] [--clients 4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.router_load import bursts, latency_in_turns, sequential, throughput_in_turns  # noqa: E402
from bench.router_ping_profile import profile_ping  # noqa: E402
from bench.router_workers import FLOOR_QUEUE, start_floor, start_router, stop, wait_answering  # noqa: E402
from protocol.commands import CommandEnvelope  # noqa: E402
from tests.support.fake_moltbook import FakeMoltbook  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "router_roundtrip.json"


def with_hanging_platform(server: RedisServer, data_dir: Path, calls: int) -> dict[str, Any]:
    """PING latency of one router while four reads of a hanging Moltbook are always in flight."""
    fake = FakeMoltbook(api_key="moltbook_sk_" + "benchKey123456")
    fake.start()
    fake.fail_mode, fake.delay = "slow", 120.0
    router = [
        start_router(server, "hang", data_dir, MOLTBOOK_API_KEY=fake.api_key, MOLTBOOK_API_BASE=fake.base)
    ]
    stop_flag = threading.Event()
    admin = server.admin_client()

    def keep_hanging() -> None:
        while not stop_flag.is_set():
            for _ in range(4):
                envelope = CommandEnvelope.new(
                    "GET_PROFILE", {"platform": "moltbook"}, "bench", ttl_seconds=3
                )
                admin.lpush(server.keys.command_queue, envelope.to_json())
            stop_flag.wait(3)

    try:
        wait_answering(server.admin_url, server.keys)
        feeder = threading.Thread(target=keep_hanging, daemon=True)
        feeder.start()
        time.sleep(0.5)
        figures = sequential(server.admin_url, server.keys, calls)
        figures["hanging_requests_seen"] = len(fake.requests)
        return figures
    finally:
        stop_flag.set()
        fake.stop()
        stop(router)
        admin.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    workers: list[subprocess.Popen[bytes]] = []
    data_dir = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "load_average_at_start": round(os.getloadavg()[0], 2),
    }
    try:
        server.start()
        url, keys = server.admin_url, server.keys
        floor_keys = dataclasses.replace(keys, command_queue=FLOOR_QUEUE)
        workers += [start_floor(server, 0), start_router(server, "bench0", data_dir)]
        wait_answering(url, floor_keys)
        wait_answering(url, keys)
        results["latency_one_worker"] = latency_in_turns(
            url, {"router": keys, "floor": floor_keys}, args.calls, args.rounds
        )
        results["router_bursts"] = bursts(url, keys)
        workers += [start_floor(server, n) for n in (1, 2)]
        workers += [start_router(server, f"bench{n}", data_dir) for n in (1, 2)]
        time.sleep(1.5)
        wait_answering(url, floor_keys)
        wait_answering(url, keys)
        results["throughput_three_workers"] = throughput_in_turns(
            url, {"router": keys, "floor": floor_keys}, args.calls * 4, args.clients, args.rounds
        )
        stop(workers)
        results["router_with_hanging_platform"] = with_hanging_platform(server, data_dir, args.calls)
        profile = profile_ping(server, data_dir, 2000)
    finally:
        stop(workers)
        server.cleanup()
    latency, three = results["latency_one_worker"], results["throughput_three_workers"]
    router_p50 = statistics.median(run["p50_ms"] for run in latency["runs"]["router"])
    results["load_average_at_end"] = round(os.getloadavg()[0], 2)
    results["vs_targets"] = {
        "ping_p50_ratio_median": latency["median_ratio"],
        "ping_p50_ratio_per_round": latency["ratios"],
        "ping_p50_target": "<= 1.3",
        "throughput_share_median": three["median_ratio"],
        "throughput_share_per_round": three["ratios"],
        "throughput_target": ">= 0.80 in every round",
        "hang_p50_ratio": round(results["router_with_hanging_platform"]["p50_ms"] / router_p50, 2),
        "hang_target": "<= 2.0",
    }
    text = profile.pop("text")
    results["ping_profile"] = profile
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in results.items() if k != "ping_profile"}, indent=2))
    print(text)
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
