"""Benchmark: one console turn with a scripted model and one dry-run router action, against a floor.

The floor is the same command sent raw through the agent's router client (the round trip alone).
The turn is the agent's whole loop on a fresh workspace: the prompt built from the workspace, the
scripted model asking for CREATE_POST, the command recorded in the pending file, sent to a real
router (dry run) over a real redis-server, its reply observed, the answer, history and artifact
written. Target (issue 19): the turn within 2.5x of the floor. Also counts the fsyncs of a turn
and says where a turn's time goes (cProfile, the top entries by cumulative time).

Prints the figures and writes bench/results/console_turn.json.
Usage: .venv/bin/python bench/console_turn.py [--turns 300]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from agent.actions import local_actions  # noqa: E402
from agent.link.pending_commands import PendingCommands  # noqa: E402
from agent.link.redis_pool import redis_client  # noqa: E402
from agent.link.router_client import RouterClient  # noqa: E402
from agent.llm.scripted.llm import ScriptedLLM  # noqa: E402
from agent.mind.loop import AgentLoop, LoopLimits  # noqa: E402
from agent.workspace.folder import SHIPPED_WORKSPACE, TEMPLATES, Workspace  # noqa: E402
from bench.router_workers import start_router, stop, wait_answering  # noqa: E402
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


RAW_ORIGIN = Origin(OWNER, "console")


def raw_calls(client: RouterClient, calls: int) -> list[float]:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        params = {"platform": "bsky", "text": f"raw post {n} {time.time()}"}
        reply = client.call("CREATE_POST", params, "bench", origin=RAW_ORIGIN)  # a turn that read nothing
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
    return [line for line in out.getvalue().splitlines() if line.strip()][-18:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    server = RedisServer(persistent=False)
    data_dir = Path(tempfile.mkdtemp(prefix="safeclaw-bench-"))
    routers: list[Any] = []
    try:
        server.start()
        routers.append(start_router(server, "bench-turn", data_dir, **ROUTER_LIMITS))
        wait_answering(server.agent_url, server.keys)
        workspace = fresh_workspace()
        outbox = PendingCommands(workspace)
        client = RouterClient(redis_client(server.agent_url), server.keys, timeout=10, outbox=outbox)
        loop = AgentLoop(workspace, CountingLLM(), local_actions(), client, LoopLimits(3, 1))
        turns(loop, 20)  # warm-up
        raw_calls(client, 20)
        raw, turn = [], []
        for _ in range(5):  # interleaved rounds: a busy machine slows both alike
            raw += raw_calls(client, args.turns // 5)
            turn += turns(loop, args.turns // 5)
        fsyncs = count_fsyncs(loop)
        where = profile(loop, 50)
        client.close()
    finally:
        stop(routers)
        server.cleanup()
    floor, whole = percentiles(raw), percentiles(turn)
    results = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "raw_command": floor,
        "console_turn": whole,
        "ratio_p50": round(whole["p50_ms"] / floor["p50_ms"], 2),
        "target_ratio": "<= 2.5",
        "fsyncs_per_turn": fsyncs,
        "profile_top": where,
    }
    print(json.dumps({k: v for k, v in results.items() if k != "profile_top"}, indent=1))
    print("\n".join(where))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
