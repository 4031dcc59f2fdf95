"""Benchmark: the router's PING round trip against a floor, and what a hanging platform costs.

The floor is a minimal worker on the same Redis: BLMOVE a command into its processing list, push
the reply, drop the processing entry - nothing else. Routers and floor workers run side by side
for the whole run, each on a queue of its own (the floor's is `FLOOR_QUEUE`), and are driven by
the same clients (`agent.link.router_client.RouterClient`, logged in alike), from several client
processes so that the clients are not what limits the figure. On a shared machine the load moves
within seconds, so router and floor are measured in turns, `--rounds` times (the order swapped
each round), and each round gives a ratio; the median ratio and every round's are reported:

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

Prints the figures and writes bench/results/router_roundtrip.json.
Usage: .venv/bin/python bench/router_roundtrip.py [--calls 1000] [--clients 4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import multiprocessing
import os
import platform
import pstats
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

import redis  # noqa: E402

from agent.link.redis_pool import redis_client  # noqa: E402
from agent.link.router_client import RouterClient  # noqa: E402
from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from tests.support.fake_moltbook import FakeMoltbook  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "router_roundtrip.json"
FLOOR_QUEUE = "safeclaw:bench:floor_queue"
THREADS_PER_CLIENT = 4


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
    }


# -- the floor ------------------------------------------------------------------------------------
def floor_worker(url: str, queue: str, response_prefix: str, processing: str) -> None:
    """BLMOVE, reply, drop: the least any reliable router must do (run as a subprocess)."""
    conn = redis.Redis.from_url(url)
    while True:
        raw = conn.blmove(queue, processing, 1, "RIGHT", "LEFT")
        if raw is None:
            continue
        command = json.loads(raw)
        reply = json.dumps({"id": command["id"], "status": "ok", "message": "", "result": {"pong": True}})
        key = f"{response_prefix}{command['id']}"
        pipe = conn.pipeline(transaction=False)
        pipe.lpush(key, reply)
        pipe.expire(key, 3600)
        pipe.lrem(processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes
        pipe.execute()


def start_floor(server: RedisServer, n: int) -> subprocess.Popen[bytes]:
    code = (
        f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); from bench.router_roundtrip import "
        f"floor_worker; floor_worker({server.admin_url!r}, {FLOOR_QUEUE!r}, "
        f"{server.keys.response_prefix!r}, {server.keys.processing(f'floor{n}')!r})"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def start_router(
    server: RedisServer, router_id: str, data_dir: Path, **extra: str
) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REDIS_URL": server.router_url,
        "ROUTER_ID": router_id,
        "ROUTER_DATA_DIR": str(data_dir),
        "ROUTER_LOG_FILE": str(data_dir / f"{router_id}.log"),
        "ROUTER_AUDIT_DIR": str(data_dir / "audit"),
        **extra,
    }
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file", "/nonexistent.env"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    processes.clear()


def wait_answering(url: str, keys: Keys) -> None:
    client = RouterClient(redis_client(url), keys, timeout=2)
    deadline = time.monotonic() + 60
    while client.call("PING", {}, "bench")["status"] != "ok":
        if time.monotonic() > deadline:
            raise RuntimeError("no worker answered PING")
    for _ in range(50):  # warm-up
        client.call("PING", {}, "bench")
    client.close()


# -- the clients ----------------------------------------------------------------------------------
def sequential(url: str, keys: Keys, calls: int) -> dict[str, Any]:
    return {"calls": calls, **percentiles(sequential_samples(url, keys, calls))}


def sequential_samples(url: str, keys: Keys, calls: int) -> list[float]:
    client = RouterClient(redis_client(url), keys, timeout=30)
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        observation = client.call("PING", {}, "bench")
        samples.append(time.perf_counter() - start)
        if observation["status"] != "ok":
            raise RuntimeError(f"PING answered {observation}")
    client.close()
    return samples


def latency_in_turns(
    url: str, sides: dict[str, Keys], calls: int, rounds: int, blocks: int = 5
) -> dict[str, Any]:
    """One client calling PING in sequence, per round `blocks` blocks of each side alternating (the
    order swapped each round); a side's figures in a round are over all its blocks' calls, and the
    round's ratio is the first side's p50 over the second's."""
    names = list(sides)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for index in range(rounds):
        order = names if index % 2 == 0 else names[::-1]
        samples: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(blocks):
            for name in order:
                samples[name] += sequential_samples(url, sides[name], calls // blocks)
        for name in names:
            runs[name].append({"calls": len(samples[name]), "blocks": blocks, **percentiles(samples[name])})
    ratios = [
        round(a["p50_ms"] / b["p50_ms"], 2) for a, b in zip(runs[names[0]], runs[names[1]], strict=True)
    ]
    return {"runs": runs, "ratios": ratios, "median_ratio": round(statistics.median(ratios), 2)}


def client_process(url: str, phases: list[Keys], calls: int, barrier: Any, out: Any) -> None:
    """One client process: per phase (a side's queue), THREADS_PER_CLIENT threads calling PING back
    to back; every process starts each phase together (the barrier)."""
    clients: dict[Keys, list[RouterClient]] = {}
    for keys in phases:
        if keys not in clients:
            clients[keys] = [RouterClient(redis_client(url), keys, timeout=30)
                             for _ in range(THREADS_PER_CLIENT)]

    def run(client: RouterClient, statuses: list[str]) -> None:
        for _ in range(calls // THREADS_PER_CLIENT):
            statuses.append(str(client.call("PING", {}, "bench")["status"]))

    for index, keys in enumerate(phases):
        statuses: list[str] = []
        threads = [threading.Thread(target=run, args=(c, statuses)) for c in clients[keys]]
        barrier.wait()
        start = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        out.put((index, statuses.count("ok"), len(statuses), start, time.time()))


def throughput_in_turns(
    url: str, sides: dict[str, Keys], calls: int, clients: int, rounds: int, blocks: int = 3
) -> dict[str, Any]:
    """PING/s of each side under `clients` client processes, in turns: per round, `blocks` blocks
    of each side alternating (the order swapped each round), the same client processes throughout;
    a side's figure in a round is its calls over its blocks' time, and the round's ratio the first
    side's over the second's."""
    context = multiprocessing.get_context("spawn")
    names = list(sides)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for index in range(rounds):
        order = names if index % 2 == 0 else names[::-1]
        phases = [name for _ in range(blocks) for name in order]
        out, barrier = context.Queue(), context.Barrier(clients)
        per_process = calls // blocks // clients
        processes = [
            context.Process(target=client_process,
                            args=(url, [sides[name] for name in phases], per_process, barrier, out))
            for _ in range(clients)
        ]
        for process in processes:
            process.start()
        results = [out.get(timeout=300) for _ in range(clients * len(phases))]
        for process in processes:
            process.join()
        for name in names:
            mine = [i for i, phase in enumerate(phases) if phase == name]
            done = [r for r in results if r[0] in mine]
            elapsed = sum(
                max(r[4] for r in done if r[0] == i) - min(r[3] for r in done if r[0] == i) for i in mine
            )
            runs[name].append({
                "calls": sum(r[2] for r in done),
                "ok": sum(r[1] for r in done),
                "blocks": blocks,
                "pings_per_second": round(sum(r[2] for r in done) / elapsed, 1),
            })
    ratios = [
        round(a["pings_per_second"] / b["pings_per_second"], 2)
        for a, b in zip(runs[names[0]], runs[names[1]], strict=True)
    ]
    return {
        "client_processes": clients,
        "threads_per_client": THREADS_PER_CLIENT,
        "runs": runs,
        "ratios": ratios,
        "median_ratio": round(statistics.median(ratios), 2),
    }


# -- bursts ----------------------------------------------------------------------------------------
def bursts(url: str, keys: Keys, rounds: int = 30) -> dict[str, Any]:
    """PINGs pushed together to an idle router; per burst size, the bursts whose last reply took
    0.5 s or more, and the slowest burst."""
    conn = redis.Redis.from_url(url)
    figures: dict[str, Any] = {}
    try:
        for size in (2, 4, 8):
            held, slowest = 0, 0.0
            for _ in range(rounds):
                time.sleep(0.3)  # idle: the router is waiting in its BLMOVE
                envelopes = [CommandEnvelope.new("PING", {}, "bench", ttl_seconds=30) for _ in range(size)]
                start = time.perf_counter()
                conn.lpush(keys.command_queue, *[e.to_json() for e in envelopes])
                for envelope in envelopes:
                    if conn.blpop([keys.response(envelope.id)], timeout=10) is None:
                        raise RuntimeError("a PING of a burst was not answered")
                took = time.perf_counter() - start
                held += took >= 0.5
                slowest = max(slowest, took)
            figures[f"burst_{size}"] = {"bursts": rounds, "held_half_a_second": held,
                                         "slowest_ms": round(slowest * 1000, 1)}
    finally:
        conn.close()
    return figures


# -- a hanging platform ---------------------------------------------------------------------------
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


# -- where one PING's time goes -------------------------------------------------------------------
def profile_ping(server: RedisServer, data_dir: Path, pings: int) -> dict[str, Any]:
    """cProfile of the router's own handling of PINGs (decode to reply written), in process."""
    from router.app import build_worker
    from router.config.settings import RouterSettings
    from router.queue.worker import as_bytes
    from router.registry import discover_skills

    settings = RouterSettings.from_env(
        {
            "REDIS_URL": server.router_url,
            "ROUTER_ID": "profiled",
            "ROUTER_DATA_DIR": str(data_dir),
            "ROUTER_AUDIT_DIR": str(data_dir / "audit-profile"),
        }
    )
    worker = build_worker(settings, discover_skills(), {})
    admin = server.admin_client()
    envelopes = [CommandEnvelope.new("PING", {}, "bench", ttl_seconds=60).to_json() for _ in range(pings)]
    profiler = cProfile.Profile()
    started = time.perf_counter()
    for text in envelopes:
        admin.lpush(server.keys.command_queue, text)
        raw = worker.conn.blmove(server.keys.command_queue, worker.processing, 1, "RIGHT", "LEFT")
        profiler.enable()
        worker._handle(as_bytes(raw or b""))
        profiler.disable()
    elapsed = time.perf_counter() - started
    for text in envelopes:
        admin.delete(server.keys.response(json.loads(text)["id"]))
    admin.close()
    worker.audit.close()
    worker.conn.close()
    stats: Any = pstats.Stats(profiler)
    total = stats.total_tt
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("cumulative").print_stats(25)
    top = []
    for (filename, line, name), (_cc, calls, _tt, ct, _callers) in sorted(
        stats.stats.items(), key=lambda item: item[1][3], reverse=True
    )[:25]:
        where = os.path.relpath(filename, REPO_ROOT) if filename.startswith(str(REPO_ROOT)) else filename
        top.append(
            {
                "function": f"{Path(where).name}:{line}({name})",
                "calls_per_ping": round(calls / pings, 2),
                "cumulative_us_per_ping": round(ct / pings * 1e6, 1),
            }
        )
    return {
        "pings": pings,
        "handle_us_per_ping": round(total / pings * 1e6, 1),
        "loop_us_per_ping_with_blmove": round(elapsed / pings * 1e6, 1),
        "top_cumulative": top,
        "text": report.getvalue(),
    }


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
