"""The duplicate guard's cost per post, in process, with an empty week and with a week of long texts
already sent (`bench/router_post.py` prints it with the post's figures)."""

from __future__ import annotations

import random
import statistics
import time

import redis

from protocol.keys import Keys
from router.bounds.duplicates import DuplicateGuard
from router.bounds.settings import BoundsSettings
from tests.support.redis_server import RedisServer

KEYS = Keys()

WORDS = ("river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window")


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


class Effect:
    """What the duplicate guard reads of a post."""

    def __init__(self, words: str) -> None:
        self.platform, self.kind, self.text, self.all_text = "mastodon", "post", words, words


def guard_cost(server: RedisServer, history: int, checks: int = 50) -> dict[str, float]:
    """ms per check with an empty week, then with `history` texts of 2,000 characters sent over the
    week before (the guard running all along, as in a router)."""
    conn = redis.Redis.from_url(server.router_url)
    guard = DuplicateGuard(BoundsSettings.from_env({}), f"{KEYS.router_prefix}sent:")
    rng = random.Random(7)

    def long_text() -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(260))[:2000]

    def timed(at: float) -> tuple[float, float]:
        """p50 ms of a check: wall clock, and this thread's CPU time (what a busy machine's other
        jobs do not add to)."""
        samples, cpu = [], []
        for n in range(checks):
            effect = Effect(long_text())
            start, start_cpu = time.perf_counter(), time.thread_time()
            entry = guard.take(conn, effect, at + n)
            samples.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
            if entry is not None and hasattr(entry, "member"):
                guard.release(conn, entry)  # type: ignore[arg-type]
        return p50_ms(samples), p50_ms(cpu)

    admin = server.admin_client()
    admin.delete(f"{KEYS.router_prefix}sent:mastodon")
    start = time.time() - 6.9 * 86400
    empty = timed(start - 3600)
    for n in range(history):  # a week of posts, 10 minutes apart at 1,000
        guard.take(conn, Effect(long_text()), start + n * 6.9 * 86400 / max(history, 1))
    full = timed(time.time())
    conn.close()
    admin.close()
    return {"empty_ms": empty[0], f"with_{history}_texts_ms": full[0], "ratio": round(full[0] / empty[0], 2),
            "cpu_empty_ms": empty[1], f"cpu_with_{history}_texts_ms": full[1],
            "cpu_ratio": round(full[1] / empty[1], 2)}
