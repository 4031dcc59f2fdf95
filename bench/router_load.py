"""The clients of `router_roundtrip.py`: PING latency and throughput of two sides (a router and the
floor worker) measured in turns, so that a burst of load elsewhere on a shared machine falls on
both, and bursts of PINGs pushed at once to an idle router.

The router is called as the agent calls it (`RouterClient`); the floor (`RAW_SIDE`) by the least a
client can do on the same Redis: redis-py's LPUSH of a minimal command and a BLPOP of its reply.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from bench.router_workers import percentiles
from protocol.commands import CommandEnvelope
from protocol.keys import Keys

THREADS_PER_CLIENT = 4
RAW_SIDE = "floor"  # the side called with raw redis-py, not RouterClient


class RawPing:
    """PING by hand: LPUSH `{"id", "action"}` onto the queue, BLPOP the reply key."""

    def __init__(self, url: str, keys: Keys) -> None:
        self.conn = redis.Redis.from_url(url)
        self.keys = keys

    def __call__(self) -> str:
        command_id = uuid.uuid4().hex
        self.conn.lpush(self.keys.command_queue, json.dumps({"id": command_id, "action": "PING"}))
        popped = self.conn.blpop([self.keys.response(command_id)], timeout=30)
        if popped is None:
            raise RuntimeError("the floor did not answer")
        return str(json.loads(popped[1])["status"])

    def close(self) -> None:
        self.conn.close()


class ClientPing:
    """PING as the agent sends it."""

    def __init__(self, url: str, keys: Keys) -> None:
        self.client = RouterClient(redis_client(url), keys, timeout=30)

    def __call__(self) -> str:
        return str(self.client.call("PING", {}, "bench")["status"])

    def close(self) -> None:
        self.client.close()


def pinger(url: str, keys: Keys, raw: bool) -> RawPing | ClientPing:
    return RawPing(url, keys) if raw else ClientPing(url, keys)


def sequential(url: str, keys: Keys, calls: int) -> dict[str, Any]:
    return {"calls": calls, **percentiles(sequential_samples(url, keys, calls))}


def sequential_samples(url: str, keys: Keys, calls: int, raw: bool = False) -> list[float]:
    ping = pinger(url, keys, raw)
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        status = ping()
        samples.append(time.perf_counter() - start)
        if status != "ok":
            raise RuntimeError(f"PING answered {status}")
    ping.close()
    return samples


def said(kind: str, index: int, ratio: float) -> None:
    load = os.getloadavg()[0]
    print(f"{kind} round {index + 1}: router/floor {ratio}, load average {load:.2f}", flush=True)


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
                samples[name] += sequential_samples(url, sides[name], calls // blocks, raw=name == RAW_SIDE)
        for name in names:
            runs[name].append({"calls": len(samples[name]), "blocks": blocks, **percentiles(samples[name]),
                               "load_average": round(os.getloadavg()[0], 2)})
        said("PING p50", index, round(runs[names[0]][-1]["p50_ms"] / runs[names[1]][-1]["p50_ms"], 2))
    ratios = [
        round(a["p50_ms"] / b["p50_ms"], 2) for a, b in zip(runs[names[0]], runs[names[1]], strict=True)
    ]
    return {"runs": runs, "ratios": ratios, "median_ratio": round(statistics.median(ratios), 2)}


def client_process(url: str, phases: list[tuple[Keys, bool]], calls: int, barrier: Any, out: Any) -> None:
    """One client process: per phase (a side's queue, and whether it is called raw),
    THREADS_PER_CLIENT threads calling PING back to back; every process starts each phase together
    (the barrier)."""
    clients: dict[tuple[Keys, bool], list[Callable[[], str]]] = {}
    for keys, raw in phases:
        if (keys, raw) not in clients:
            clients[(keys, raw)] = [pinger(url, keys, raw) for _ in range(THREADS_PER_CLIENT)]

    def run(ping: Callable[[], str], statuses: list[str]) -> None:
        for _ in range(calls // THREADS_PER_CLIENT):
            statuses.append(ping())

    for index, phase in enumerate(phases):
        statuses: list[str] = []
        threads = [threading.Thread(target=run, args=(c, statuses)) for c in clients[phase]]
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
                            args=(url, [(sides[name], name == RAW_SIDE) for name in phases], per_process,
                                  barrier, out))
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
                "load_average": round(os.getloadavg()[0], 2),
            })
        said("three workers' PING/s", index,
             round(runs[names[0]][-1]["pings_per_second"] / runs[names[1]][-1]["pings_per_second"], 2))
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
