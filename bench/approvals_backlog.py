"""Benchmark: a backlog of held commands against a real router process.

- PING round trips (p50, p99, max) with no approval waiting, then with 8,000 held commands
  waiting (caps raised so they all fit), over a window long enough for several sweeps (one every
  5 s): the sweep reads only what expired and one page of the rest, so the backlog should not
  show in PING's time;
- one sweep's Redis work (expired page + one page looked at for lost wake-ups), timed alone,
  beside the sweep as it was (every pending record and decision read, one by one);
- with the default caps, how many of 8,000 held commands from one conversation are stored and
  how many are answered `busy`.

Starts its own redis-server (ACL users) and router processes. Prints the figures and writes
bench/results/approvals_backlog.json.

Usage: .venv/bin/python bench/approvals_backlog.py [--held 8000] [--seconds 12]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.origin import OWNER, Origin  # noqa: E402
from router.policy.approval_store import ApprovalStore, PendingCaps  # noqa: E402
from tests.router.router_helpers import RouterProcess, router_env  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "approvals_backlog.json"
ORIGIN = Origin(OWNER, "console")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[int(len(ordered) * 0.99) - 1] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
        "n": len(ordered),
    }


def ping_window(agent: redis.Redis, keys: Any, seconds: float) -> dict[str, float]:
    """PING round trips, one every 20 ms, for `seconds` (several sweeps)."""
    samples = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        envelope = CommandEnvelope.new("PING", {}, "bench", 30, origin=ORIGIN)
        start = time.perf_counter()
        agent.lpush(keys.command_queue, envelope.to_json())
        agent.blpop([keys.response(envelope.id)], timeout=30)
        samples.append(time.perf_counter() - start)
        time.sleep(0.02)
    return percentiles(samples)


def hold(agent: redis.Redis, keys: Any, count: int, conversations: int, batch: int = 500) -> dict[str, int]:
    """Push `count` commands the router holds, `batch` at a time (the lanes answer `busy` past
    their own backlog), and count every answer by status and reason."""
    counted: dict[str, int] = {}
    for first in range(0, count, batch):
        ids = []
        pipe = agent.pipeline(transaction=False)
        for i in range(first, min(count, first + batch)):
            envelope = CommandEnvelope.new("NOTE", {"text": f"held {i}"}, f"c{i % conversations}", 3600,
                                           origin=ORIGIN)
            ids.append(envelope.id)
            pipe.lpush(keys.command_queue, envelope.to_json())
        pipe.execute()
        for label, n in answers(agent, keys, ids).items():
            counted[label] = counted.get(label, 0) + n
    return counted


def answers(agent: redis.Redis, keys: Any, ids: list[str], deadline: float = 600) -> dict[str, int]:
    counted: dict[str, int] = {}
    end = time.monotonic() + deadline
    for command_id in ids:
        popped = agent.blpop([keys.response(command_id)], timeout=max(1, int(end - time.monotonic())))
        if popped is None:
            counted["unanswered"] = counted.get("unanswered", 0) + 1
            continue
        reply = json.loads(popped[1])
        label = reply["status"]
        if reply["status"] == "error":
            capped = "ROUTER_MAX_PENDING" in reply.get("message", "")
            label = f"error:{reply.get('error')}" + (" (approvals cap)" if capped else "")
        counted[label] = counted.get(label, 0) + 1
    return counted


def with_router(server: RedisServer, folder: Path, name: str, **env: str) -> RouterProcess:
    data = folder / name
    data.mkdir()
    process = RouterProcess(router_env(server.router_url, data, name, ROUTER_REQUIRE_APPROVAL="NOTE", **env))
    admin = server.admin_client()
    try:
        end = time.monotonic() + 60
        while not admin.get(server.keys.router_heartbeat(name)):
            if time.monotonic() > end:
                raise RuntimeError(f"router {name} did not start; see {process.log_path}")
            time.sleep(0.1)
    finally:
        admin.close()
    return process


def sweep_cost(server: RedisServer, repeats: int = 50) -> dict[str, float]:
    conn = redis.Redis.from_url(server.router_url, decode_responses=True)
    store = ApprovalStore(conn, server.keys, "bench", 3600, PendingCaps())
    samples = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            store.expired_ids()
            store.decided_page()
            samples.append(time.perf_counter() - start)
    finally:
        conn.close()
    return percentiles(samples)


def full_sweep_cost(server: RedisServer, repeats: int = 5) -> dict[str, float]:
    """The sweep as it was before the bound: every pending id, its record and its decision read
    one by one, every 5 s; the same backlog, for comparison in the same run."""
    conn = redis.Redis.from_url(server.router_url, decode_responses=True)
    samples = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for found in conn.zrangebyscore(server.keys.approvals_pending, "-inf", "+inf"):
                conn.get(server.keys.approval(str(found)))
                conn.get(server.keys.approval_decision(str(found)))
            samples.append(time.perf_counter() - start)
    finally:
        conn.close()
    return percentiles(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held", type=int, default=8000)
    parser.add_argument("--seconds", type=float, default=12.0)
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": platform.platform(), "held": args.held}
    server = RedisServer()
    server.start()
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            agent = redis.Redis.from_url(server.agent_url, decode_responses=True, socket_timeout=60)
            raised = with_router(server, folder, "big", ROUTER_MAX_PENDING_APPROVALS=str(args.held + 100),
                                 ROUTER_MAX_PENDING_PER_CONVERSATION=str(args.held))
            try:
                results["ping_empty"] = ping_window(agent, server.keys, args.seconds)
                results["stored_with_raised_caps"] = hold(agent, server.keys, args.held, 200)
                results["ping_with_backlog"] = ping_window(agent, server.keys, args.seconds)
                results["one_sweep_redis_work"] = sweep_cost(server)
                results["one_full_sweep_as_before"] = full_sweep_cost(server)
            finally:
                raised.stop()
            admin = server.admin_client()
            for key in admin.scan_iter(match=f"{server.keys.approval_prefix}*"):
                admin.delete(key)
            admin.close()
            default = with_router(server, folder, "default")
            try:
                results["one_conversation_default_caps"] = hold(agent, server.keys, args.held, 1)
            finally:
                default.stop()
            agent.close()
    finally:
        server.stop()
        server.cleanup()
    print(json.dumps(results, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
