"""Redis answering with faults, through a proxy in front of a real redis-server
(`tests.support.faulty_redis`): every error code that is Redis refusing to serve, replies of
another type than the command's, and connections reset partway through a pipeline's replies,
at any step (take, read ahead, claim, run, answer, sweep, recover, heartbeat, approval poll).
No router exits, each command is answered or dead-lettered with its reason, none runs twice,
heartbeats stay alive, and a claim whose answer came back garbled is read back, not dropped."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
import redis

from tests.router.router_helpers import (
    MY_SKILLS,
    RouterProcess,
    WorkerThread,
    note_lines,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)
from tests.support.faulty_redis import FaultyRedis


@pytest.fixture
def proxy(redis_urls):
    made = FaultyRedis(redis_urls.server.port)
    made.start()
    yield made
    made.stop()


def router_url(redis_urls, proxy: FaultyRedis) -> str:
    return proxy.url("router", redis_urls.server.router_password)


@pytest.mark.parametrize("kind", ["type:nil", "type:int", "type:status", "type:empty"])
def test_a_claim_whose_answer_comes_back_garbled_is_read_back_and_run_once(redis_urls, admin, tmp_path, proxy, kind):
    keys = redis_urls.keys
    proxy.chance, proxy.kinds, proxy.only = 1.0, (kind,), frozenset({b"SET"})
    with WorkerThread(settings_for(router_url(redis_urls, proxy), tmp_path), MY_SKILLS):
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
        proxy.on = True  # every SET's answer from now on: the claim's, the heartbeat's
        command_id = push(admin, keys, "SLOW_NOTE", {"text": "claimed through a garbled answer"})
        reply = reply_of(admin, keys, command_id, timeout=30)
        proxy.on = False
    assert reply["status"] == "ok", reply
    assert [n["text"] for n in note_lines(tmp_path)] == ["claimed through a garbled answer"]
    assert proxy.faults[kind] > 0


def command_ids(admin: redis.Redis, keys: Any, rounds: int) -> list[str]:
    ids = []
    for i in range(rounds):
        ids.append(push(admin, keys, "PING", {}, ttl=60))
        ids.append(push(admin, keys, "SLOW_NOTE", {"text": f"note {i}"}, ttl=60))
        if i % 4 == 0:
            ids.append(push(admin, keys, "RAISE", {"raise": "SystemExit", "where": "run"}, ttl=60))
        if i % 6 == 0:
            ids.append(push(admin, keys, "NOTE", {"text": f"held {i}"}, conversation="telegram:1", ttl=60))
        time.sleep(0.05)
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_a_fleet_through_every_kind_of_redis_fault_keeps_every_command(redis_urls, admin, tmp_path, proxy, seed):
    keys = redis_urls.keys
    proxy.chance = 0.05
    proxy.reseed(seed)
    env = {"ROUTER_REQUIRE_APPROVAL": "NOTE"}
    routers = [RouterProcess(router_env(router_url(redis_urls, proxy), tmp_path, router_id=r, **env))
               for r in ("r1", "r2")]
    try:
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        proxy.on = True
        ids = command_ids(admin, keys, 120)
        proxy.on = False
        unanswered = []
        for command_id in ids:
            try:
                reply_of(admin, keys, command_id, timeout=60)
            except AssertionError:
                unanswered.append(command_id)
        dead = " ".join(admin.lrange(keys.dead_letter, 0, -1))
        assert [c for c in unanswered if c not in dead] == [], dict(proxy.faults)
        for router_id, router in zip(("r1", "r2"), routers, strict=True):
            assert router.process.poll() is None, router.log_path.read_text()
            assert admin.exists(keys.router_heartbeat(router_id))
            wait_until(lambda r=router_id: admin.llen(keys.processing(r)) == 0, f"{router_id}'s list empty", 30)
        texts = Counter(note["text"] for note in note_lines(tmp_path))
        assert [text for text, times in texts.items() if times > 1] == []  # at most once, whatever Redis said
        assert sum(proxy.faults.values()) > 20, dict(proxy.faults)
    finally:
        for router in routers:
            router.stop()
