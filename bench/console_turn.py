"""Benchmark: one console turn with a scripted model and one dry-run router action, against floors.

The turn is the agent's whole loop on a fresh workspace: the prompt built from the workspace, the
scripted model asking for CREATE_POST, the command recorded in the pending file, sent to a real
router (dry run, its own process) over a real redis-server, its reply observed, the answer,
history and artifact written. The floors are the least a client can do with the same router on
the same Redis: raw redis-py LPUSH of the command's envelope and BLPOP of its reply, for the same
command (a dry-run CREATE_POST as the owner's, `raw_post`) and for the minimal one (PING,
`raw_ping`). The three sides run in turns: `--rounds` rounds of two blocks of each, the order
turned each round; each round's ratios of the turn's p50 over each floor's are printed with the
load average. Target (issue 28): a console turn at most 2x the minimal command through the same
router, judged here against the same command sent raw (`raw_post`), and shown against PING too.
Also counts the fsyncs of a turn and says where a turn's time goes (cProfile, the top entries by
cumulative time).

Prints the figures and writes bench/results/console_turn.json.
Usage: .venv/bin/python bench/console_turn.py [--turns 60] [--rounds 5]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from agent.actions import local_actions  # noqa: E402
from agent.link.pending_commands import PendingCommands  # noqa: E402
from agent.link.redis_pool import redis_client  # noqa: E402
from agent.link.router_client import RouterClient  # noqa: E402
from agent.llm.scripted.llm import ScriptedLLM  # noqa: E402
from agent.mind.loop import AgentLoop, LoopLimits  # noqa: E402
from agent.workspace.folder import SHIPPED_WORKSPACE, TEMPLATES, Workspace  # noqa: E402
from bench.rounds import alternating_rounds  # noqa: E402
from bench.router_workers import start_router, stop, wait_answering  # noqa: E402
from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from protocol.origin import OWNER, Origin  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "console_turn.json"
ROUTER_LIMITS = {"ROUTER_DRY_RUN": "true", "ROUTER_QUOTAS": "post=1000000", "ROUTER_DUPLICATE_THRESHOLD": "1"}


class CountingLLM(ScriptedLLM):
    """Asks for one post (its text unique, so no bound refuses it), then answers."""

    def __init__(self) -> None:
        super().__init__([])
        self.turn = 0

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if len(self.prompts) % 2 == 0:  # the second step of a turn sees the post's result
            return "Posted (dry run)."
        self.turn += 1
        text = f"bench post {self.turn} {time.time()}"
        call = [{"name": "CREATE_POST", "params": {"platform": "bsky", "text": text}}]
        return "<tool_code>" + json.dumps(call) + "</tool_code>"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p90_ms": round(ordered[int(len(ordered) * 0.9)] * 1000, 3)}


def fresh_workspace() -> Workspace:
    root = Path(tempfile.mkdtemp(prefix="safeclaw-bench-ws-"))
    for name in TEMPLATES:
        (root / name).write_bytes((SHIPPED_WORKSPACE / name).read_bytes())
    workspace = Workspace(root)
    workspace.ensure()
    return workspace


RAW_ORIGIN = Origin(OWNER, "console")  # what a console turn that read nothing sends


class RawClient:
    """The floor's client: redis-py on the same Redis, an envelope LPUSHed, its reply BLPOPed."""

    def __init__(self, url: str, keys: Keys) -> None:
        self.conn = redis.Redis.from_url(url)
        self.keys = keys

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        envelope = CommandEnvelope.new(action, params, "console", ttl_seconds=10, origin=RAW_ORIGIN)
        self.conn.lpush(self.keys.command_queue, envelope.to_json())
        popped = self.conn.blpop([self.keys.response(envelope.id)], timeout=10)
        if popped is None:
            raise RuntimeError(f"the router did not answer {action}")
        reply: dict[str, Any] = json.loads(popped[1])
        return reply

    def close(self) -> None:
        self.conn.close()


def raw_calls(client: RawClient, calls: int, action: str) -> list[float]:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        post = {"platform": "bsky", "text": f"raw post {n} {time.time()}"}
        params = post if action == "CREATE_POST" else {}
        reply = client.call(action, params)
        samples.append(time.perf_counter() - started)
        assert reply["status"] == "ok", reply
    return samples


def turns(loop: AgentLoop, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        result = loop.run_turn("console", "post something for me")
        samples.append(time.perf_counter() - started)
        assert result.reply.startswith("Posted"), result.reply
    return samples


def count_fsyncs(loop: AgentLoop) -> int:
    real, count = os.fsync, [0]

    def counting(fd: Any) -> None:
        count[0] += 1
        real(fd)

    os.fsync = counting
    try:
        loop.run_turn("console", "post something for me")
    finally:
        os.fsync = real
    return count[0]


def profile(loop: AgentLoop, count: int) -> list[str]:
    profiler = cProfile.Profile()
    profiler.enable()
    turns(loop, count)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
    lines = [line for line in out.getvalue().splitlines() if line.strip()][-18:]
    # Paths as the repository names them (and the installed packages by their own folder).
    site = str(Path(pstats.__file__).parent)
    return [re.sub(r"\S*/site-packages/", "", line.replace(str(REPO_ROOT) + "/", "").replace(site + "/", ""))
            for line in lines]


def in_rounds(loop: AgentLoop, raw: RawClient, per_side: int, rounds: int) -> dict[str, Any]:
    sides = {
        "console_turn": lambda count: turns(loop, count),
        "raw_post": lambda count: raw_calls(raw, count, "CREATE_POST"),
        "raw_ping": lambda count: raw_calls(raw, count, "PING"),
    }
    per_round = alternating_rounds(
        sides, rounds, per_side, percentiles,
        {"ratio_to_raw_post": ("console_turn", "raw_post"),
         "ratio_to_raw_ping": ("console_turn", "raw_ping")},
    )
    to_post = [row["ratio_to_raw_post"] for row in per_round]
    to_ping = [row["ratio_to_raw_ping"] for row in per_round]
    return {
        "rounds": per_round,
        "ratios_to_raw_post": to_post,
        "median_ratio_to_raw_post": round(statistics.median(to_post), 2),
        "ratios_to_raw_ping": to_ping,
        "median_ratio_to_raw_ping": round(statistics.median(to_ping), 2),
        "target": "console turn <= 2x the same command sent raw through the same router",
        "target_met_in_median": statistics.median(to_post) <= 2.0,
        "rounds_within_target": sum(r <= 2.0 for r in to_post),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=60, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    data_dir = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    routers: list[Any] = []
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "load_average_at_start": round(os.getloadavg()[0], 2),
    }
    try:
        server.start()
        routers.append(start_router(server, "bench-turn", data_dir, **ROUTER_LIMITS))
        wait_answering(server.agent_url, server.keys)
        workspace = fresh_workspace()
        outbox = PendingCommands(workspace)
        client = RouterClient(redis_client(server.agent_url), server.keys, timeout=10, outbox=outbox)
        raw = RawClient(server.agent_url, server.keys)
        loop = AgentLoop(workspace, CountingLLM(), local_actions(), client, LoopLimits(3, 1))
        turns(loop, 20)  # warm-up
        raw_calls(raw, 20, "CREATE_POST")
        raw_calls(raw, 20, "PING")
        results.update(in_rounds(loop, raw, args.turns, args.rounds))
        results["fsyncs_per_turn"] = count_fsyncs(loop)
        where = profile(loop, 50)
        client.close()
        raw.close()
    finally:
        stop(routers)
        server.cleanup()
    results["load_average_at_end"] = round(os.getloadavg()[0], 2)
    results["profile_top"] = where
    print(json.dumps({k: v for k, v in results.items() if k not in ("profile_top", "rounds")}, indent=1))
    print("\n".join(where))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
