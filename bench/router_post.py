"""Benchmark: a real post through the router against its floor, Mastodon.py posting directly.

Both post to the same fake Mastodon instance (tests/support/fake_mastodon.py) on this machine, in
one run: the floor is one `Mastodon` object posting `--posts` statuses in sequence (its session
kept, as any direct user would); the router is a real router process (`router/start_router.py`)
taking `CREATE_POST` commands from Redis one after another, every check and record included:
plan, policy (kill switch, approvals, secrets, bounds with the duplicate guard), the audit line
fsynced before the post, the idempotency records, the reply. Redis runs without persistence, so
the figure is the router's, not the disk's. Also timed, in process: the duplicate guard alone
with an empty week and with `--history` texts of 2,000 characters already sent.

Target: a post through the router at most 1.5x the floor (p50); the guard's cost per post within
2x from empty to 1,000 long texts.
Prints the figures and writes bench/results/router_post.json.
Usage: .venv/bin/python bench/router_post.py [--posts 300] [--history 1000]
"""

from __future__ import annotations

import argparse
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

from protocol.commands import CommandEnvelope  # noqa: E402
from protocol.origin import OWNER, Origin  # noqa: E402
from router.bounds.duplicates import DuplicateGuard  # noqa: E402
from router.bounds.settings import BoundsSettings  # noqa: E402
from tests.support.fake_mastodon import FakeMastodon  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "router_post.json"
TOKEN = "bench-mastodon-" + "token-value"
WORDS = (
    "river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window",
    "garden", "copper", "thunder", "silver", "morning", "paper", "candle", "forest", "winter", "summer",
    "autumn", "bridge", "shadow", "echo",
)


def unique_text(rng: random.Random, n: int, words: int = 14) -> str:
    return f"note {n}: " + " ".join(rng.choice(WORDS) for _ in range(words))


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def floor(masto: FakeMastodon, posts: int, rng: random.Random) -> list[float]:
    api = Mastodon(api_base_url=masto.url, access_token=TOKEN, version_check_mode="none")
    samples = []
    for n in range(posts):
        start = time.perf_counter()
        api.status_post(unique_text(rng, n))
        samples.append(time.perf_counter() - start)
    return samples


def start_router(server: RedisServer, masto: FakeMastodon, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {
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


def through_router(server: RedisServer, masto: FakeMastodon, posts: int, rng: random.Random,
                   data_dir: Path) -> list[float]:
    router = start_router(server, masto, data_dir)
    admin = server.admin_client()
    try:
        deadline = time.monotonic() + 60
        while call(admin, server, "PING", {})["status"] != "ok":
            if time.monotonic() > deadline:
                raise RuntimeError("the router does not answer")
        for n in range(10):  # warm-up: imports, the instance's limit, the connection
            call(admin, server, "CREATE_POST", {"platform": "mastodon", "text": unique_text(rng, -n - 1)})
        samples = []
        for n in range(posts):
            start = time.perf_counter()
            reply = call(admin, server, "CREATE_POST", {"platform": "mastodon", "text": unique_text(rng, n)})
            samples.append(time.perf_counter() - start)
            if reply["status"] != "ok":
                raise RuntimeError(f"a post was answered {reply}")
        return samples
    finally:
        admin.close()
        router.terminate()
        router.wait(timeout=30)


class Effect:
    """What the duplicate guard reads of a post."""

    def __init__(self, words: str) -> None:
        self.platform, self.kind, self.text, self.all_text = "mastodon", "post", words, words


def guard_cost(server: RedisServer, history: int, checks: int = 50) -> dict[str, float]:
    """ms per check with an empty week, then with `history` texts of 2,000 characters sent over the
    week before (the guard running all along, as in a router)."""
    conn = redis.Redis.from_url(server.router_url)
    guard = DuplicateGuard(BoundsSettings.from_env({}), "safeclaw:router:sent:")
    rng = random.Random(7)

    def long_text() -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(260))[:2000]

    def timed(at: float) -> float:
        samples = []
        for n in range(checks):
            start = time.perf_counter()
            entry = guard.take(conn, Effect(long_text()), at + n)
            samples.append(time.perf_counter() - start)
            if entry is not None and hasattr(entry, "member"):
                guard.release(conn, entry)  # type: ignore[arg-type]
        return p50_ms(samples)

    admin = server.admin_client()
    admin.delete("safeclaw:router:sent:mastodon")
    start = time.time() - 6.9 * 86400
    empty = timed(start - 3600)
    for n in range(history):  # a week of posts, 10 minutes apart at 1,000
        guard.take(conn, Effect(long_text()), start + n * 6.9 * 86400 / max(history, 1))
    full = timed(time.time())
    conn.close()
    admin.close()
    return {"empty_ms": empty, f"with_{history}_texts_ms": full, "ratio": round(full / empty, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=300)
    parser.add_argument("--history", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(1)
    server = RedisServer(persistent=False)
    server.start()
    masto = FakeMastodon(token=TOKEN)
    masto.start()
    try:
        with tempfile.TemporaryDirectory(prefix="safeclaw-bench-post-") as folder:
            floor_samples = floor(masto, args.posts, rng)
            router_samples = through_router(server, masto, args.posts, rng, Path(folder))
            floor_again = floor(masto, args.posts, rng)  # the floor twice: a busy machine shows
        guard = guard_cost(server, args.history)
    finally:
        masto.stop()
        server.cleanup()
    floor_p50 = min(p50_ms(floor_samples), p50_ms(floor_again))
    figures = {
        "posts": args.posts,
        "floor_mastodon_py_p50_ms": floor_p50,
        "router_p50_ms": p50_ms(router_samples),
        "router_over_floor": round(p50_ms(router_samples) / floor_p50, 2),
        "target_over_floor": 1.5,
        "duplicate_guard": guard,
    }
    print(json.dumps(figures, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
