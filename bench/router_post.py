"""Benchmark: a real post through the router against its floor, Mastodon.py posting directly.

Both post to the same fake Mastodon instance (tests/support/fake_mastodon.py), served by a
process of its own (in the bench's process its threads would share a GIL with the direct client).
Each of `--rounds` rounds holds `--posts` posts a side, in six short blocks a side that alternate,
the sides' order turned each block: statuses from one `Mastodon` object (its session kept, as any
direct user would); through the invariants' skeleton (`bench/post_skeleton.py`: the round trips
and the audit line's flush a post cannot do without, no check); and `CREATE_POST` commands
through a real router process (`router/start_router.py`), every check and record included: plan,
policy (kill switch, approvals, secrets, bounds with the duplicate guard), the audit line fsynced
before the post, the idempotency records, the reply. Each round's ratios are printed with the
load average, and the CPU time the skeleton's and the router's processes spent per post
(steadier than the clock on a shared machine). Then where a post's time goes
(`bench/post_spans.py`, a worker in this process), and, in process: the duplicate guard alone
with an empty week and with `--history` texts of 2,000 characters already sent.

Target: a post through the router at most 1.5x the floor and 1.15x the skeleton (p50); the
guard's cost per post within 2x from empty to 1,000 long texts.
Prints the figures and writes bench/results/router_post.json.
Usage: .venv/bin/python bench/router_post.py [--posts 60] [--rounds 5] [--history 1000]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import redis  # noqa: E402
from mastodon import Mastodon  # noqa: E402

from bench.duplicate_guard_cost import guard_cost  # noqa: E402
from bench.own_process import FakeAddress, mastodon_in_its_own_process  # noqa: E402
from bench.post_spans import Spans  # noqa: E402
from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.origin import OWNER, Origin  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "router_post.json"
# Shaped as Mastodon's tokens are (43 random base64url characters), made the same each run: a
# word-like token would set the redactor's searches for a key's pieces and characters off on
# every "mastodon" and "token" of the router's own lines.
TOKEN = base64.urlsafe_b64encode(hashlib.sha256(b"safeclaw router_post bench").digest()).decode().rstrip("=")
WORDS = (
    "river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window",
    "garden", "copper", "thunder", "silver", "morning", "paper", "candle", "forest", "winter", "summer",
    "autumn", "bridge", "shadow", "echo",
)


def unique_text(rng: random.Random, n: int, words: int = 14) -> str:
    return f"note {n}: " + " ".join(rng.choice(WORDS) for _ in range(words))


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def floor(api: Mastodon, posts: int, rng: random.Random) -> list[float]:
    samples = []
    for n in range(posts):
        start = time.perf_counter()
        api.status_post(unique_text(rng, n))
        samples.append(time.perf_counter() - start)
    return samples


def router_env(server: RedisServer, masto: FakeAddress, data_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REDIS_URL": server.router_url,
        "ROUTER_ID": "bench",
        "ROUTER_DATA_DIR": str(data_dir),
        "ROUTER_LOG_FILE": str(data_dir / "bench.log"),
        "ROUTER_QUOTAS": "mastodon:post=1000000",
        "ROUTER_PACING": "mastodon:post=0",
        "MASTODON_INSTANCE": masto.url,
        "MASTODON_TOKEN": TOKEN,
    }


def start_router(server: RedisServer, masto: FakeAddress, data_dir: Path) -> subprocess.Popen[bytes]:
    env = router_env(server, masto, data_dir)
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file", "/nonexistent.env"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def call(admin: redis.Redis, server: RedisServer, action: str, params: dict[str, Any]) -> dict[str, Any]:
    envelope = CommandEnvelope.new(action, params, "console", ttl_seconds=30, origin=Origin(OWNER, "console"))
    admin.lpush(server.keys.command_queue, envelope.to_json())
    popped = admin.blpop([server.keys.response(envelope.id)], timeout=30)
    if popped is None:
        raise RuntimeError(f"no reply to {action}")
    reply: dict[str, Any] = json.loads(popped[1])
    return reply


def posted(admin: redis.Redis, server: RedisServer, posts: int, rng: random.Random) -> list[float]:
    samples = []
    for n in range(posts):
        start = time.perf_counter()
        reply = call(admin, server, "CREATE_POST", {"platform": "mastodon", "text": unique_text(rng, n)})
        samples.append(time.perf_counter() - start)
        if reply["status"] != "ok":
            raise RuntimeError(f"a post was answered {reply}")
    return samples


SKELETON_QUEUE = "skeleton:queue"


def start_skeleton(server: RedisServer, masto: FakeAddress, data_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "bench" / "post_skeleton.py"), server.admin_url, SKELETON_QUEUE,
         masto.url, TOKEN, str(data_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system, all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def skeleton_posts(admin: redis.Redis, posts: int, rng: random.Random, start: int = 0) -> list[float]:
    samples = []
    for n in range(start, start + posts):
        command_id = f"skeleton-{n}"
        start_at = time.perf_counter()
        admin.lpush(SKELETON_QUEUE, json.dumps({"id": command_id, "action": "CREATE_POST",
                                                "params": {"text": unique_text(rng, n)}}))
        if admin.blpop([f"skeleton:reply:{command_id}"], timeout=30) is None:
            raise RuntimeError("the skeleton worker does not answer")
        samples.append(time.perf_counter() - start_at)
    return samples


def in_turns(server: RedisServer, masto: FakeAddress, posts: int, rounds: int, rng: random.Random,
             data_dir: Path, blocks: int = 6) -> list[dict[str, float]]:
    """`rounds` rounds of `posts` posts a side: direct, through the invariants' skeleton
    (`bench/post_skeleton.py`) and through the router, in `blocks` short blocks a side that
    alternate, the sides' order turned each block, so a burst of load elsewhere on the machine
    falls on every side."""
    router = start_router(server, masto, data_dir)
    skeleton = start_skeleton(server, masto, data_dir)
    admin = server.admin_client()
    api = Mastodon(api_base_url=masto.url, access_token=TOKEN, version_check_mode="none")
    counter = iter(range(10**9))
    sides = {
        "floor": (None, lambda count: floor(api, count, rng)),
        "skeleton": (skeleton, lambda count: skeleton_posts(admin, count, rng, start=next(counter) * posts)),
        "router": (router, lambda count: posted(admin, server, count, rng)),
    }
    try:
        deadline = time.monotonic() + 60
        while call(admin, server, "PING", {})["status"] != "ok":
            if time.monotonic() > deadline:
                raise RuntimeError("the router does not answer")
        for _, run in sides.values():  # warm-up: imports, the instance's limit, the connection
            run(10)
        return [one_round(sides, posts, blocks, turn) for turn in range(rounds)]
    finally:
        admin.lpush(SKELETON_QUEUE, json.dumps({"id": "stop", "action": "STOP"}))
        admin.close()
        router.terminate()
        router.wait(timeout=30)
        skeleton.wait(timeout=30)


def one_round(sides: dict[str, Any], posts: int, blocks: int, turn: int) -> dict[str, float]:
    names = list(sides)
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu = dict.fromkeys(names, 0.0)
    for block in range(blocks):
        shift = (turn + block) % len(names)
        for name in names[shift:] + names[:shift]:
            process, run = sides[name]
            before = cpu_seconds(process.pid) if process is not None else 0.0
            samples[name] += run(posts // blocks)
            cpu[name] += (cpu_seconds(process.pid) - before) if process is not None else 0.0
    count = len(samples["floor"])
    direct, least, through = (p50_ms(samples[name]) for name in names)
    found = {"floor_p50_ms": direct, "skeleton_p50_ms": least, "router_p50_ms": through,
             "skeleton_ratio": round(least / direct, 2), "ratio": round(through / direct, 2),
             "router_over_skeleton": round(through / least, 2),
             "skeleton_cpu_ms_per_post": round(cpu["skeleton"] / count * 1000, 2),
             "router_cpu_ms_per_post": round(cpu["router"] / count * 1000, 2),
             "load_average": round(os.getloadavg()[0], 2)}
    print(f"round {turn + 1}: direct {direct} ms, skeleton {least} ms ({found['skeleton_ratio']}x), router "
          f"{through} ms ({found['ratio']}x; {found['router_over_skeleton']}x the skeleton), load average "
          f"{found['load_average']}", flush=True)
    return found


def where_the_time_goes(server: RedisServer, masto: FakeAddress, posts: int, rng: random.Random,
                        data_dir: Path) -> dict[str, Any]:
    """The same posts through a router worker in this process (its lanes as in the router
    process), the functions of `SPANS` timed: ms per post in each, and the Redis round trips."""
    import threading

    from router.app import build_worker
    from router.config.settings import RouterSettings
    from router.registry import discover_skills

    env = {key: value for key, value in router_env(server, masto, data_dir).items() if key != "PATH"}
    credentials = {"MASTODON_INSTANCE": masto.url, "MASTODON_TOKEN": TOKEN}
    worker = build_worker(RouterSettings.from_env(env), discover_skills(), credentials)
    thread = threading.Thread(target=worker.run, daemon=True)
    admin = server.admin_client()
    thread.start()
    samples = []
    try:
        for n in range(10):  # warm-up: the kept client, the instance's limit, the guard's history
            call(admin, server, "CREATE_POST", {"platform": "mastodon", "text": unique_text(rng, -n - 1)})
        with Spans() as spans:
            for n in range(posts):
                start = time.perf_counter()
                params = {"platform": "mastodon", "text": unique_text(rng, n)}
                reply = call(admin, server, "CREATE_POST", params)
                samples.append(time.perf_counter() - start)
                if reply["status"] != "ok":
                    raise RuntimeError(f"a post was answered {reply}")
    finally:
        worker.stop()
        thread.join(timeout=30)
        admin.close()
    return {
        "posts": posts,
        "post_p50_ms": p50_ms(samples),
        "spans": spans.per_post(posts),
        "redis_round_trips_per_post": {k: round(v / posts, 1) for k, v in spans.round_trips.items()},
        "lane_redis_ms_per_post": round(spans.round_trip_seconds / posts * 1000, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=60, help="posts a side in each round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--history", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(1)
    server = RedisServer(persistent=False)
    server.start()
    load_before = os.getloadavg()
    try:
        with mastodon_in_its_own_process(TOKEN) as masto:
            with tempfile.TemporaryDirectory(prefix="safeclaw-bench-post-") as folder:
                rounds = in_turns(server, masto, args.posts, args.rounds, rng, Path(folder))
            with tempfile.TemporaryDirectory(prefix="safeclaw-bench-profile-") as folder:
                breakdown = where_the_time_goes(server, masto, 150, rng, Path(folder))
        guard = guard_cost(server, args.history)
    finally:
        server.cleanup()
    figures = {
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "fake_mastodon": "its own process",
        "posts_a_side_a_round": args.posts,
        "rounds": rounds,
        "router_over_floor_median": statistics.median(r["ratio"] for r in rounds),
        "skeleton_over_floor_median": statistics.median(r["skeleton_ratio"] for r in rounds),
        "router_over_skeleton_median": statistics.median(r["router_over_skeleton"] for r in rounds),
        "target_over_floor": 1.5,
        "target_over_skeleton": 1.15,
        "duplicate_guard": guard,
        "where_a_post_goes_profiled": breakdown,
    }
    print(json.dumps(figures, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
