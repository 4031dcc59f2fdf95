"""The embedded store (SQLite, WAL) answers the bounds' Redis commands as Redis does, and holds
across processes: the same quota, pacing, duplicate and circuit code on it stays exact when
several processes race."""

from __future__ import annotations

import multiprocessing
import os
import random
import sqlite3
import stat

import pytest

from router.bounds import Denial
from router.bounds.circuit import CircuitBreaker
from router.bounds.duplicates import DuplicateGuard, SentEntry
from router.bounds.embedded import EmbeddedStore
from router.bounds.embedded_commands import StoreError
from router.bounds.quotas import DailyQuotas, QuotaUnit
from tests.router.bounds.bounds_helpers import NOON, NOTICES, PREFIX, FakeEffect, settings

KEYS = [f"{PREFIX}k{i}" for i in range(4)]


class Clock:
    def __init__(self, now: float = NOON) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _random_command(rng: random.Random) -> tuple[str, tuple, dict]:
    key = rng.choice(KEYS)
    score = rng.choice([1.0, 2.5, 3.0, 4.0, 7.25])
    member = rng.choice("abcde")
    return rng.choice([
        ("incr", (key,), {}),
        ("decr", (key,), {}),
        ("get", (key,), {}),
        ("set", (key, str(rng.randint(0, 9))), {"get": rng.random() < 0.5, "ex": rng.choice([None, 100])}),
        ("getdel", (key,), {}),
        ("delete", (key, rng.choice(KEYS)), {}),
        ("expire", (key, 100), {}),
        ("exists", (key,), {}),
        ("zadd", (key, {member: score}), {}),
        ("zrem", (key, member, "zz"), {}),
        ("zrange", (key, 0, -1), {"withscores": True}),
        ("zrange", (key, rng.randint(-3, 2), rng.randint(-2, 3)), {}),
        ("zremrangebyscore", (key, "-inf", f"({score}"), {}),
        ("zremrangebyscore", (key, score, "+inf"), {}),
        ("lpush", (key, member, f"{member}2"), {}),
        ("ltrim", (key, 0, rng.randint(0, 3)), {}),
        ("lrange", (key, 0, -1), {}),
        ("ttl", (key,), {}),
    ])


def _outcome(call):
    try:
        value = call()
    except Exception:  # a WRONGTYPE or not-an-integer error: both must refuse
        return "error"
    if isinstance(value, list):
        return [tuple(v) if isinstance(v, tuple) else v for v in value]
    return value


def test_every_command_answers_as_redis_does(redis_urls, tmp_path):
    """Differential: one random sequence of commands on redis-server and on the store."""
    rng = random.Random(20261126)
    client = redis_urls.admin_client()
    store = EmbeddedStore(tmp_path / "bounds.sqlite3")
    try:
        for step in range(1500):
            name, args, kwargs = _random_command(rng)
            want = _outcome(lambda: getattr(client, name)(*args, **kwargs))  # noqa: B023
            got = _outcome(lambda: getattr(store, name)(*args, **kwargs))  # noqa: B023
            if name == "ttl" and isinstance(want, int) and want > 0:
                want, got = "has a ttl", "has a ttl" if isinstance(got, int) and got > 0 else got
            assert got == want, f"step {step}: {name}{args}{kwargs}"
    finally:
        client.close()
        store.close()


def test_a_pipeline_is_one_transaction_and_answers_each_command(tmp_path):
    store = EmbeddedStore(tmp_path / "bounds.sqlite3")
    pipe = store.pipeline(transaction=False)
    pipe.incr("a")
    pipe.expire("a", 60)
    pipe.zadd("z", {"m": 1.0})
    pipe.incr("z")  # WRONGTYPE: the whole pipeline is rolled back
    with pytest.raises(StoreError, match="WRONGTYPE"):
        pipe.execute()
    assert store.get("a") is None and store.zrange("z", 0, -1) == []
    pipe.incr("a")
    pipe.expire("a", 60)
    assert pipe.execute() == [1, True]


def test_keys_expire_on_redis_time_and_an_emptied_key_loses_its_ttl(tmp_path):
    clock = Clock()
    store = EmbeddedStore(tmp_path / "bounds.sqlite3", clock=clock)
    store.incr("quota")
    store.expire("quota", 10)
    store.zadd("sent", {"m": 1.0})
    store.expire("sent", 10)
    store.zrem("sent", "m")  # gone, and its TTL with it
    store.zadd("sent", {"n": 2.0})
    clock.now += 11
    assert store.get("quota") is None and store.incr("quota") == 1
    assert store.zrange("sent", 0, -1) == ["n"] and store.ttl("sent") == -1


def test_the_file_is_private_in_wal_mode(tmp_path):
    path = tmp_path / "data" / "bounds.sqlite3"
    EmbeddedStore(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_unwritable_folder_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot be opened"):
        EmbeddedStore(tmp_path / "file" / "bounds.sqlite3")


# -- several processes on one file --------------------------------------------------------------
def _take_quota(path: str, start, results) -> None:
    store = EmbeddedStore(__import__("pathlib").Path(path))
    start.wait()
    taken = DailyQuotas(settings(ROUTER_QUOTAS="mastodon:post=5"), f"{PREFIX}quota:").take(
        store, FakeEffect("mastodon", "post", "x"), NOON
    )
    results.put(isinstance(taken, QuotaUnit))


def _take_text(path: str, start, results, text: str) -> None:
    store = EmbeddedStore(__import__("pathlib").Path(path))
    start.wait()
    taken = DuplicateGuard(settings(), f"{PREFIX}sent:").take(store, FakeEffect("mastodon", "post", text), NOON)
    results.put(isinstance(taken, SentEntry))


def _fail_write(path: str, start, results) -> None:
    store = EmbeddedStore(__import__("pathlib").Path(path))
    start.wait()
    breaker = CircuitBreaker(settings(ROUTER_CIRCUIT_FAILURES="3"), f"{PREFIX}circuit:", NOTICES)
    breaker.record(store, FakeEffect("mastodon", "post", "x"), "error", "request_failed", NOON)
    results.put(True)


def _race(target, count: int, *args) -> list[bool]:
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    workers = [context.Process(target=target, args=(*args[:1], start, results, *args[1:])) for _ in range(count)]
    for worker in workers:
        worker.start()
    start.set()
    found = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    return found


@pytest.mark.slow
def test_racing_processes_share_one_quota_one_history_and_one_circuit(tmp_path):
    path = str(tmp_path / "bounds.sqlite3")
    assert sum(_race(_take_quota, 20, path)) == 5
    same = "the same words from eight processes at once"
    won = sum(_race(_take_text, 8, path, same))
    assert won <= 1  # never two; racing copies that all see each other are all refused (fail closed)
    assert sum(_race(_take_text, 1, path, same)) == 1 - won  # a refused copy leaves no entry behind
    _race(_fail_write, 6, path)
    store = EmbeddedStore(tmp_path / "bounds.sqlite3")
    breaker = CircuitBreaker(settings(ROUTER_CIRCUIT_FAILURES="3"), f"{PREFIX}circuit:", NOTICES)
    refusal = breaker.check(store, FakeEffect("mastodon", "post", "y"), NOON)
    assert isinstance(refusal, Denial) and refusal.reason == "circuit_open"
    opened = [n for n in store.lrange(NOTICES, 0, -1) if '"circuit_open"' in n]
    assert len(opened) == 1  # told once, whichever process opened it
