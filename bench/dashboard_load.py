"""The dashboard under load, for bench/control_plane.py: the real dashboard process (uvicorn) on a
real redis-server.

- GET /api/status, /api/approvals and /api/activity?limit=50 p50/p99 with 1, 100 and 1,000
  pending approvals and audit lines, and the Redis commands each request costs (INFO
  commandstats; the approvals page is two round trips: ids, then every record in one pipeline);
- the dashboard's CPU (user + system, % of one core, from /proc) over a quiet window with no
  live stream open, then with 10 idle live streams open.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.audit.lines import canonical
from router.policy.approval_store import ApprovalStore
from scripts.stack_dashboard import DashboardPlan, wait_until_serving
from scripts.stack_redis import free_port
from tests.support.redis_server import RedisServer

REPO_ROOT = Path(__file__).resolve().parent.parent
COUNTS = (1, 100, 1000)
IDLE_STREAMS = 10
CPU_WINDOW_S = 20.0


def seed(server: RedisServer, count: int) -> None:
    """`count` pending approvals and `count` audit lines (everything else of the dashboard emptied)."""
    admin = server.admin_client()
    keys = Keys()
    admin.flushdb()
    router = redis.Redis.from_url(server.router_url, decode_responses=True)
    store = ApprovalStore(router, keys, "bench", 3600)
    for i in range(count):
        text = f"held post {i} " + "x" * 200
        conversation = f"telegram:{i % 40}"  # the router lets 50 wait per conversation, 1,000 in all
        envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, conversation, 60)
        store.request(envelope, {"platform": "bsky", "kind": "post", "target": None}, text)
    pipe = admin.pipeline(transaction=False)
    for i in range(count):
        line = {
            "seq": i,
            "ts": time.time() - i,
            "status": "ok",
            "action": "CREATE_POST",
            "text": "y" * 200,
            "effect": {"platform": "bsky", "kind": "post", "target": None},
            "origin": "autonomy",
        }
        pipe.xadd(keys.audit_stream, {"line": canonical(line)})
    pipe.execute()
    router.close()


def redis_commands(admin: redis.Redis) -> int:
    stats: Any = admin.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_percent(pid: int, seconds: float) -> float:
    start, began = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    return round(100 * (cpu_seconds(pid) - start) / (time.perf_counter() - began), 2)


def open_streams(port: int, token: str, count: int) -> list[socket.socket]:
    streams = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        request = (
            f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
        )
        sock.sendall(request.encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 200"), "the live stream did not open"
        streams.append(sock)
    return streams


def figures(server: RedisServer, token: str, requests: int, folder: Path) -> dict[str, Any]:
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "REDIS_URL": server.control_url,
        "DASHBOARD_TOKEN": token,
        "DASHBOARD_PORT": str(port),
        "SAFECLAW_LOG_DIR": str(folder),
        "SAFECLAW_WORKSPACE": str(folder / "workspace"),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO_ROOT / "dashboard" / "start_dashboard.py"),
            "--env-file",
            "/nonexistent.env",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    admin = server.admin_client()
    try:
        started = time.perf_counter()
        assert wait_until_serving(DashboardPlan(env, "127.0.0.1", port, None), lambda: process.poll() is None)
        results: dict[str, Any] = {"start_s": round(time.perf_counter() - started, 2)}
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
            for count in COUNTS:
                seed(server, count)
                by_path: dict[str, Any] = {}
                for path in ("/api/status", "/api/approvals", "/api/activity?limit=50"):
                    assert client.get(path).status_code == 200  # the first request reads the new lines
                    before = redis_commands(admin)
                    samples = []
                    for _ in range(requests):
                        begin = time.perf_counter()
                        assert client.get(path).status_code == 200
                        samples.append(time.perf_counter() - begin)
                    per_request = (redis_commands(admin) - before) / requests
                    by_path[path] = {**percentiles(samples), "redis_commands": round(per_request, 1)}
                results[f"{count}_items"] = by_path
        results["cpu_percent_no_stream"] = cpu_percent(process.pid, CPU_WINDOW_S)
        streams = open_streams(port, token, IDLE_STREAMS)
        try:
            time.sleep(2)  # the poller starts with the first stream
            results[f"cpu_percent_{IDLE_STREAMS}_idle_streams"] = cpu_percent(process.pid, CPU_WINDOW_S)
        finally:
            for sock in streams:
                sock.close()
        results["cpu_window_s"] = CPU_WINDOW_S
        return results
    finally:
        process.terminate()
        process.wait(timeout=20)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
    }
