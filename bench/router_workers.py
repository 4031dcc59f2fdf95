"""The workers the router benchmarks measure (`router_roundtrip.py`, `console_turn.py`): router
processes started as `./safeclaw` starts them (no env file, the settings in the environment), the
floor worker a router is measured against, and how both are awaited and stopped.

The floor is a minimal worker on the same Redis: BLMOVE a command into its processing list, push
the reply, drop the processing entry - nothing else. It runs on a queue of its own (`FLOOR_QUEUE`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import redis

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from protocol.keys import Keys
from tests.support.redis_server import RedisServer

REPO_ROOT = Path(__file__).resolve().parent.parent
FLOOR_QUEUE = "safeclaw:bench:floor_queue"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
    }


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
        f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); from bench.router_workers import "
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
