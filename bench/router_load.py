"""The clients of `router_roundtrip.py`: PING latency and throughput of two sides (a router and the
floor worker) measured in turns, so that a burst of load elsewhere on a shared machine falls on
both, and bursts of PINGs pushed at once to an idle router.
"""

from __future__ import annotations

import multiprocessing
import statistics
import threading
import time
from typing import Any

import redis

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from bench.router_workers import percentiles
from protocol.commands import CommandEnvelope
from protocol.keys import Keys

THREADS_PER_CLIENT = 4


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
