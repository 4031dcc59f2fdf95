"""The agent's Redis connections while its parts work, counted by the server (CLIENT LIST, user agent).

    .venv/bin/python bench/agent_connections.py [--threads 24]

A real redis-server with the shipped ACL; the agent built as `start_agent` builds it (`agent.app`):
one console turn sends a router command (no router runs, so it waits the 1 s timeout) and the budget
publishes its summary, the approval desk takes notices, one autonomy cycle runs, the heartbeat beats,
/status reads the stack. Then `--threads` threads take notices and read /status at once: the count is
sampled every 5 ms and its peak kept. Writes bench/results/agent_connections.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.app import build_service  # noqa: E402
from agent.config.settings import settings_from_config  # noqa: E402
from agent.link.redis_pool import MAX_CONNECTIONS  # noqa: E402
from agent.status.heartbeat import AgentHeartbeat  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "agent_connections.json"
ACTION = '<tool_code>[{"name": "PING", "params": {}}]</tool_code>'


def measure(server: RedisServer, tmp: Path, threads: int) -> dict[str, Any]:
    env = {**os.environ, "REDIS_URL": server.agent_url, "SAFECLAW_WORKSPACE": str(tmp / "workspace")}
    config = {"llm": {"provider": "scripted", "model": "s"}, "timeout": 1}
    settings = settings_from_config(config, tmp / "config.json", env)
    admin = server.admin_client()

    def count() -> int:
        return sum(1 for client in admin.client_list() if client["user"] == "agent")

    service = build_service(settings)
    assert service.make_cycle is not None
    cycle = service.make_cycle()  # the autonomy channel's
    heartbeat = AgentHeartbeat.from_settings(settings, service.conn, ["console"], service.loop.llm)
    service.loop.llm.inner.enqueue(ACTION, "Sent.")  # type: ignore[attr-defined]
    with heartbeat:
        service.loop.run_turn("console", "ping the router")
        service.desk.take()
        cycle.run_once()
        service.status_lines()
        after_parts = count()
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], count())
                time.sleep(0.005)

        def busy() -> None:
            for _ in range(5):
                service.desk.take()
                service.status_lines()

        sampler = threading.Thread(target=sample)
        sampler.start()
        workers = [threading.Thread(target=busy) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        done.set()
        sampler.join()
        held = count()
    admin.close()
    return {"after_every_part_worked": after_parts, "peak_with_threads": peak[0], "threads": threads,
            "held_after": held, "pool_max": MAX_CONNECTIONS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=24)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            figures = measure(server, Path(tmp), args.threads)
    finally:
        server.cleanup()
    print(json.dumps(figures, indent=2))
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
