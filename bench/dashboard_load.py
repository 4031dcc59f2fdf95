"""The dashboard under load, for bench/control_plane.py: real dashboard processes (uvicorn) on
real redis-servers.

- pages of equal size, little stored against much: two dashboards side by side, each on its own
  redis-server, one with 50 pending approvals and 50 audit lines, the other with 1,000 pending
  approvals (the most the router lets wait) and 100,000 audit lines (written to the stream as the
  router writes them, which keeps the newest AUDIT_STREAM_MAX; the routers' files, read only when
  paging past the dashboard's copy, are not written). GET /api/approvals (a page
  of 50), /api/activity?limit=50 and /api/status on each in turns: per round two blocks of each
  side alternating (the order swapped each round), each round's ratio of the large side's p50
  over the small side's printed with the load average; and the Redis commands each request
  costs (INFO commandstats; the approvals page is two round trips: ids, then every record in
  one pipeline);
- the dashboard's CPU (user + system, % of one core, from /proc) over a quiet window with no
  live stream open, then with 10 idle live streams open (the large side).
"""

from __future__ import annotations

import functools
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from bench.rounds import alternating_rounds
from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.audit.lines import canonical
from router.audit.recorder import AUDIT_STREAM_MAX
from router.policy.approval_store import ApprovalStore
from scripts.stack_dashboard import DashboardPlan, wait_until_serving
from scripts.stack_redis import free_port
from tests.support.redis_server import RedisServer

REPO_ROOT = Path(__file__).resolve().parent.parent
SIDES = {"small": (50, 50), "large": (1000, 100_000)}  # (pending approvals, audit lines)
PATHS = ("/api/approvals", "/api/activity?limit=50", "/api/status")
IDLE_STREAMS = 10
CPU_WINDOW_S = 20.0


def seed(server: RedisServer, count: int, lines: int) -> None:
    """`count` pending approvals and `lines` audit lines (everything else of the dashboard emptied)."""
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
    for i in range(lines):
        if i and i % 5000 == 0:
            pipe.execute()
        line = {
            "seq": i,
            "ts": time.time() - i,
            "status": "ok",
            "action": "CREATE_POST",
            "text": "y" * 200,
            "effect": {"platform": "bsky", "kind": "post", "target": None},
            "origin": "autonomy",
        }
        pipe.xadd(keys.audit_stream, {"line": canonical(line)}, maxlen=AUDIT_STREAM_MAX, approximate=True)
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


def start_dashboard(server: RedisServer, token: str, folder: Path) -> tuple[subprocess.Popen[bytes], int]:
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
        [sys.executable, str(REPO_ROOT / "dashboard" / "start_dashboard.py"), "--env-file",
         "/nonexistent.env"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_until_serving(DashboardPlan(env, "127.0.0.1", port, None), lambda: process.poll() is None)
    return process, port


def timed(client: httpx.Client, path: str, requests: int) -> list[float]:
    samples = []
    for _ in range(requests):
        begin = time.perf_counter()
        assert client.get(path).status_code == 200
        samples.append(time.perf_counter() - begin)
    return samples


def in_rounds(clients: dict[str, httpx.Client], requests: int, rounds: int) -> dict[str, Any]:
    """Per path, the large side against the small one in turns (see the module's docstring)."""
    figures: dict[str, Any] = {}
    for path in PATHS:
        first: dict[str, float] = {}
        for name, client in clients.items():
            begin = time.perf_counter()
            assert client.get(path, timeout=120).status_code == 200  # the first request reads the new lines
            first[name] = round((time.perf_counter() - begin) * 1000, 1)
        sides = {name: functools.partial(timed, client, path) for name, client in clients.items()}
        per_round = alternating_rounds(sides, rounds, requests, percentiles, {"ratio": ("large", "small")},
                                       label=f"{path} ")
        ratios = [row["ratio"] for row in per_round]
        figures[path] = {"first_request_ms": first, "rounds": per_round, "ratios": ratios,
                         "median_ratio": round(statistics.median(ratios), 2)}
    return figures


def commands_per_request(server: RedisServer, client: httpx.Client, path: str, requests: int = 20) -> float:
    admin = server.admin_client()
    before = redis_commands(admin)
    timed(client, path, requests)
    return round((redis_commands(admin) - before - 1) / requests, 1)  # less the INFO itself


def figures(
    servers: dict[str, RedisServer], token: str, requests: int, rounds: int, folder: Path
) -> dict[str, Any]:
    processes: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    try:
        results: dict[str, Any] = {"sides": {name: {"pending_approvals": approvals, "audit_lines": lines}
                                             for name, (approvals, lines) in SIDES.items()}}
        for name, server in servers.items():
            seed(server, *SIDES[name])
            started = time.perf_counter()
            processes[name] = start_dashboard(server, token, folder / name)
            results[f"start_s_{name}"] = round(time.perf_counter() - started, 2)
        headers = {"Authorization": f"Bearer {token}"}
        clients = {name: httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers)
                   for name, (_, port) in processes.items()}
        try:
            results["pages"] = in_rounds(clients, requests, rounds)
            results["redis_commands_per_request"] = {
                name: {path: commands_per_request(servers[name], client, path) for path in PATHS}
                for name, client in clients.items()
            }
        finally:
            for client in clients.values():
                client.close()
        large, port = processes["large"]
        results["cpu_percent_no_stream"] = cpu_percent(large.pid, CPU_WINDOW_S)
        streams = open_streams(port, token, IDLE_STREAMS)
        try:
            time.sleep(2)  # the poller starts with the first stream
            results[f"cpu_percent_{IDLE_STREAMS}_idle_streams"] = cpu_percent(large.pid, CPU_WINDOW_S)
        finally:
            for sock in streams:
                sock.close()
        results["cpu_window_s"] = CPU_WINDOW_S
        return results
    finally:
        for process, _ in processes.values():
            process.terminate()
        for process, _ in processes.values():
            process.wait(timeout=20)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
    }
