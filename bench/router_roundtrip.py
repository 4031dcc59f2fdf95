"""Benchmark: agent-side send -> router -> PING -> reply, with one and three routers.

Starts its own redis-server (ACL users, no persistence) and real router processes
(`python router/start_router.py`), measures sequential latency (p50/p99) and concurrent
throughput through `agent.router_client.RouterClient`, beside the raw LPUSH+BLPOP round trip
on the same server. Prints the figures and writes bench/results/router_roundtrip.json.

Usage: .venv/bin/python bench/router_roundtrip.py [--calls 500] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from agent.router_client import RouterClient  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "router_roundtrip.json"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
    }


def raw_roundtrip(server: RedisServer, calls: int) -> dict[str, Any]:
    client = server.admin_client()
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        client.lpush("bench:raw", str(i))
        client.blpop(["bench:raw"], timeout=5)
        samples.append(time.perf_counter() - start)
    client.close()
    return {"calls": calls, **percentiles(samples)}


def start_router(server: RedisServer, router_id: str, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "REDIS_URL": server.router_url,
        "ROUTER_ID": router_id,
        "ROUTER_DATA_DIR": str(data_dir), "ROUTER_LOG_FILE": str(data_dir / f"{router_id}.log"),
    }
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file", "/nonexistent.env"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def wait_for_routers(server: RedisServer, count: int) -> None:
    client = RouterClient(server.agent_url, server.keys, timeout=5)
    deadline = time.monotonic() + 60
    while len(client.routers()) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} routers did not start")
        time.sleep(0.1)
    client.close()


def router_figures(server: RedisServer, calls: int, concurrency: int) -> dict[str, Any]:
    client = RouterClient(server.agent_url, server.keys, timeout=30)
    for _ in range(20):  # warm-up
        client.call("PING", {}, "bench")
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        observation = client.call("PING", {}, "bench")
        samples.append(time.perf_counter() - start)
        if observation["status"] != "ok":
            raise RuntimeError(f"PING answered {observation}")
    client.close()

    clients = [RouterClient(server.agent_url, server.keys, timeout=30) for _ in range(concurrency)]
    total = calls * 2

    def one(i: int) -> str:
        return str(clients[i % concurrency].call("PING", {}, "bench")["status"])

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        statuses = list(pool.map(one, range(total)))
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return {
        "sequential": {"calls": calls, **percentiles(samples)},
        "concurrent": {"calls": total, "concurrency": concurrency, "ok": statuses.count("ok"),
                       "commands_per_second": round(total / elapsed, 1)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    routers: list[subprocess.Popen[bytes]] = []
    data_dir = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    try:
        server.start()
        results: dict[str, Any] = {
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "platform": platform.platform()},
            "raw_lpush_blpop": raw_roundtrip(server, args.calls * 2),
        }
        for count in (1, 3):
            while len(routers) < count:
                routers.append(start_router(server, f"bench{len(routers)}", data_dir))
            wait_for_routers(server, count)
            results[f"routers_{count}"] = router_figures(server, args.calls, args.concurrency)
    finally:
        for process in routers:
            process.terminate()
        for process in routers:
            process.wait(timeout=30)
        server.cleanup()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
