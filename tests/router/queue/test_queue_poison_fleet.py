"""Queue items of every odd shape, taken by a fleet of two real router processes: nesting near
and past the decoder's stack, NaN and Infinity and numbers no float holds in every numeric field,
half characters (lone surrogates) in every text field, bytes that are not UTF-8, JSON that is
not an object, params and origins of the wrong types, a params object of 200,000 keys, a 5 MB
text. No router exits, every item with a readable id is answered, the others are dead-lettered,
the processing lists end empty, the heartbeats stay, and a restart takes the next commands."""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import pytest
import redis

from router.pipeline import MAX_COMMAND_BYTES
from tests.router.router_helpers import (
    RouterProcess,
    WorkerThread,
    note_lines,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)

DEEP = 900  # under the decoder's stack: the skill's schema and the redaction see it
PAST = 100_000  # past it


def command(i: int, **fields: Any) -> dict[str, Any]:
    now = time.time()
    base = {"id": f"poison-{i}", "action": "PING", "params": {}, "conversation": "t", "created_at": now,
            "expires_at": now + 120, "v": 1, "origin": {"kind": "owner", "via": "console"}}
    return {**base, **fields}


def encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


def nested(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


SHAPES: list[dict[str, Any]] = [
    {"params": {"a": nested(DEEP)}},
    {"action": "NOTE", "params": {"text": "hi", "a": nested(DEEP)}},
    {"origin": {"kind": "owner", "via": "console", "taint": nested(DEEP)}},
    {"action": "NOTE", "params": {"text": float("nan")}},
    {"action": "SLOW_NOTE", "params": {"text": "x", "delay_seconds": float("nan")}},
    {"action": "SLOW_NOTE", "params": {"text": "x", "delay_seconds": float("inf")}},
    {"action": "SLOW_NOTE", "params": {"text": "x", "delay_seconds": 10**4000}},
    {"action": "SLOW_NOTE", "params": {"text": "x", "delay_seconds": 5e-324}},
    {"action": "NOTE", "params": {"text": "a\ud800b"}},
    {"action": "NOTE", "params": {"text": "hi"}, "conversation": "c\ud800"},
    {"action": "P\udfff"},
    {"params": {"\ud800": 1}},
    {"origin": {"kind": "owner", "via": "c\ud800"}},
    {"action": "NOTE", "params": {"text": "hi"}, "origin": {"kind": "owner", "via": "console", "taint": ["\ud800"]}},
    {"origin": {"kind": 1, "via": "console"}},
    {"origin": {"kind": "owner", "via": "console", "owner_words": [["x"]]}},
    {"origin": [1]},
    {"intent": 5},
    {"params": []},
    {"created_at": True},
    {"created_at": 1e308},
    {"created_at": 10**4000},
    {"expires_at": float("nan")},
    {"expires_at": -1e308},
    {"v": 1.0},
    {"v": 10**4000},
    {"action": "NOTE", "params": {"text": "x" * 5_000_000}},
    {"params": {str(k): k for k in range(200_000)}},
    {"action": "RAISE", "params": {"raise": "RecursionError", "where": "effect"}},
]
NO_ID = [b"null", b"[]", b'"x"', b"1e999", b"", b"   ", b'{"id": "poison-x", "action": "\xff\xfe"}',
         b"[" * PAST + b"]" * PAST, b'{"id": ' + b"[" * PAST + b"]" * PAST + b"}",
         b'{"id": "poison-y", "params": {"n": ' + b"7" * 5000 + b"}}", "\ufeff{}".encode()]


@pytest.mark.slow
def test_a_fleet_answers_or_sets_aside_every_odd_item_and_restarts(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    env = {"ROUTER_HEARTBEAT_TTL": "3"}
    routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id=r, **env)) for r in ("r1", "r2")]
    try:
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        for i, fields in enumerate(SHAPES):
            admin.lpush(keys.command_queue, encoded(command(i, **fields)))
        for item in NO_ID:
            admin.lpush(keys.command_queue, item)
        replies = {i: reply_of(admin, keys, f"poison-{i}", timeout=60) for i in range(len(SHAPES))}
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        wait_until(lambda: admin.llen(keys.dead_letter) >= len(NO_ID), "the items without an id set aside", 30)
        for router_id, router in zip(("r1", "r2"), routers, strict=True):
            assert router.process.poll() is None, router.log_path.read_text()
            assert admin.exists(keys.router_heartbeat(router_id))
            wait_until(lambda r=router_id: admin.llen(keys.processing(r)) == 0, f"{router_id}'s list empty", 20)
        for router in routers:
            router.signal(signal.SIGTERM)
            assert router.wait(30) == 0, router.log_path.read_text()
        routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id=r, **env))
                   for r in ("r1", "r2")]
        for _ in range(4):
            assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        for router in routers:
            assert router.process.poll() is None, router.log_path.read_text()
    finally:
        for router in routers:
            router.stop()
    statuses = {i: r["status"] for i, r in replies.items()}
    assert all(r["status"] in ("ok", "error", "denied", "expired", "unknown") for r in replies.values()), statuses
    written = [note["text"] for note in note_lines(tmp_path)]
    assert "a\ud800b" not in written and all(len(text) < 10_000 for text in written), written


def test_an_item_past_the_command_size_is_set_aside_undecoded_and_redis_refuses_a_huge_one(
        redis_urls, admin, tmp_path):
    """A 76 MB list of numbers took a router 500 MB to decode: an item past MAX_COMMAND_BYTES is
    never decoded (its sender is answered when its id comes first), and Redis takes no value past
    16 MB from any login (a 500 MB item would take gigabytes just to receive)."""
    keys = redis_urls.keys
    agent = redis.Redis.from_url(redis_urls.agent_url)
    try:
        with pytest.raises(redis.RedisError):  # Redis drops the connection: a protocol error
            agent.lpush(keys.command_queue, b"1" * (17 << 20))
        assert admin.llen(keys.command_queue) == 0
        big = encoded(command(0, params={"a": [1] * ((MAX_COMMAND_BYTES // 2) + 10)}))
        assert MAX_COMMAND_BYTES < len(big) < 16 << 20
        with WorkerThread(settings_for(redis_urls.router_url, tmp_path)) as worker:
            agent.lpush(keys.command_queue, big)
            reply = reply_of(admin, keys, "poison-0", timeout=30)
            assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
            assert not worker.stop_event.is_set()
    finally:
        agent.close()
    assert reply["status"] == "error" and f"more than a command's {MAX_COMMAND_BYTES}" in reply["message"], reply
    assert admin.llen(keys.processing("r1")) == 0
