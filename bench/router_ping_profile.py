"""Where one router PING's time goes: cProfile of the router's own handling (decode to reply written)
in process, for `router_roundtrip.py`."""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import time
from pathlib import Path
from typing import Any

from bench.router_workers import REPO_ROOT
from protocol.commands import CommandEnvelope
from protocol.keys import AGENT_LOGIN
from tests.support.redis_server import RedisServer


def profile_ping(server: RedisServer, data_dir: Path, pings: int) -> dict[str, Any]:
    """cProfile of the router's own handling of PINGs (decode to reply written), in process."""
    from router.app import build_worker
    from router.config.settings import RouterSettings
    from router.queue.redis_io import as_bytes
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
    agent_queue = worker.taker(AGENT_LOGIN)
    admin = server.admin_client()
    envelopes = [CommandEnvelope.new("PING", {}, "bench", ttl_seconds=60).to_json() for _ in range(pings)]
    profiler = cProfile.Profile()
    started = time.perf_counter()
    for text in envelopes:
        admin.lpush(server.keys.command_queue, text)
        raw = worker.conn.blmove(server.keys.command_queue, agent_queue.processing, 1, "RIGHT", "LEFT")
        profiler.enable()
        agent_queue.handle(as_bytes(raw or b""))
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
