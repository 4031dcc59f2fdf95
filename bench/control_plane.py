"""Benchmark: the control plane's costs.

- audit log: lines appended per second and each append's latency with the group commit (fsync
  every 100 ms), with an fsync per line and with none; lines verified per second (`router.audit.log`);
- dashboard (bench/dashboard_load.py): pages of equal size (50 rows) with little stored (50
  pending approvals, 50 audit lines) against much (1,000 and 100,000), two dashboards side by
  side on redis-servers of their own, in alternating rounds, each round's ratio printed with the
  load average; GET /api/status likewise; the Redis commands per request; the dashboard's CPU
  with no live stream and with 10 idle ones;
- kill switch: time from the owner's flip to the first command a real router denies.

Starts its own redis-server (ACL users) and processes. Prints the figures and writes
bench/results/control_plane.json.

Usage: .venv/bin/python bench/control_plane.py [--lines 20000] [--requests 100] [--rounds 5]
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
from pathlib import Path
from typing import Any

import redis

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench import dashboard_load  # noqa: E402
from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from router.audit.chain_check import verify_directory  # noqa: E402
from router.audit.log import DEFAULT_SYNC_SECONDS, AuditLog  # noqa: E402
from router.policy import kill_switch  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "control_plane.json"
TOKEN = "bench-" + "dashboard-token-000000"


AUDIT_ENTRY = {
    "command_id": "c",
    "action": "CREATE_POST",
    "decision": "allowed",
    "status": "ok",
    "effect": {"platform": "bsky", "kind": "post", "target": None},
    "text": "x" * 200,
}


def audit_mode(lines: int, mode: str) -> dict[str, Any]:
    """Append `lines` records: `group` (the router's default: a background fsync + checkpoint every
    100 ms), `each` (fsync per line), `none` (no fsync at all, the old behaviour)."""
    # On the repository's disk, not a tmpfs /tmp, so an fsync costs what it costs in use.
    with tempfile.TemporaryDirectory(dir=REPO_ROOT / "bench") as folder:
        log = AuditLog(
            Path(folder),
            "bench",
            max_bytes=4 * 1024 * 1024,
            key=b"k" * 32 if mode == "group" else None,
            sync_seconds=DEFAULT_SYNC_SECONDS if mode == "group" else None,
        )
        samples = []
        start = time.perf_counter()
        for i in range(lines):
            begin = time.perf_counter()
            log.append({**AUDIT_ENTRY, "command_id": f"c{i}"}, durable=mode == "each")
            samples.append(time.perf_counter() - begin)
        appended = time.perf_counter() - start
        log.close()
        figures: dict[str, Any] = {"append_lines_per_s": round(lines / appended), **percentiles(samples)}
        if mode == "none":
            start = time.perf_counter()
            verdict = verify_directory(Path(folder))
            verified = time.perf_counter() - start
            assert verdict.ok and verdict.lines == lines
            figures["verify_lines_per_s"] = round(lines / verified)
            figures["files_after_rotation"] = len(list(Path(folder).glob("*.jsonl")))
        return figures


def audit_figures(lines: int) -> dict[str, Any]:
    return {
        "lines": lines,
        "group_commit_every_ms": DEFAULT_SYNC_SECONDS * 1000,
        "group_commit": audit_mode(lines, "group"),
        "fsync_each_line": audit_mode(min(lines, 2000), "each"),
        "no_fsync": audit_mode(lines, "none"),
    }


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
    }


def kill_switch_figures(server: RedisServer, folder: Path, flips: int = 20) -> dict[str, Any]:
    keys = Keys()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "REDIS_URL": server.router_url,
        "ROUTER_ID": "bench",
        "ROUTER_DATA_DIR": str(folder),
        "ROUTER_LOG_FILE": str(folder / "router.log"),
    }
    router = subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file", "/nonexistent.env"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    admin = server.admin_client()
    control = redis.Redis.from_url(server.control_url, decode_responses=True)
    try:
        while admin.get(keys.router_heartbeat("bench")) is None:
            time.sleep(0.05)
        samples = []
        for _ in range(flips):
            kill_switch.flip(control, keys, False, "bench")
            flipped = time.perf_counter()
            kill_switch.flip(control, keys, True, "bench")
            envelope = CommandEnvelope.new("NOTE", {"text": "x"}, "bench", ttl_seconds=30)
            admin.lpush(keys.command_queue, envelope.to_json())
            popped: Any = admin.blpop([keys.response(envelope.id)], timeout=30)
            reply = json.loads(popped[1])
            assert reply["error"] == "kill_switch", reply
            samples.append(time.perf_counter() - flipped)
        return {"flip_to_denied_reply": percentiles(samples), "flips": flips}
    finally:
        router.terminate()
        router.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=100, help="per side, path and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "audit": audit_figures(args.lines),
    }
    servers = {"small": RedisServer(persistent=False), "large": RedisServer(persistent=False)}
    try:
        for server in servers.values():
            server.start()
        with tempfile.TemporaryDirectory() as folder:
            results["dashboard"] = dashboard_load.figures(
                servers, TOKEN, args.requests, args.rounds, Path(folder)
            )
            results["kill_switch"] = kill_switch_figures(servers["small"], Path(folder))
    finally:
        for server in servers.values():
            server.cleanup()
    results["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps({k: v for k, v in results.items() if k != "dashboard"}, indent=2))
    pages = results["dashboard"]["pages"]
    for path, figures in pages.items():
        print(f"{path}: large / small per round {figures['ratios']}, median {figures['median_ratio']}")
    print("Redis commands per request:", results["dashboard"]["redis_commands_per_request"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
