"""The router as a real process (`python router/start_router.py`) against a real redis-server:
SIGKILL mid-run, SIGTERM, three routers sharing the queue, Redis restarting under it."""

import json
import re
import signal
import threading

import pytest

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from protocol.commands import CommandEnvelope
from tests.router.router_helpers import (
    REPO_ROOT,
    RouterProcess,
    note_lines,
    push,
    reply_of,
    router_env,
    wait_until,
)
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.slow


@pytest.fixture
def routers():
    started = []

    def start(env, cwd=REPO_ROOT):
        process = RouterProcess(env, cwd, test_skills=cwd == REPO_ROOT)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def wait_heartbeat(admin, keys, router_id, process):
    def beating():
        assert process.process.poll() is None, process.log_path.read_text()
        return admin.exists(keys.router_heartbeat(router_id))
    wait_until(beating, f"router {router_id} to start")


def test_round_trip_through_router_client_from_inside_router_dir(redis_urls, admin, routers, tmp_path):
    process = routers(router_env(redis_urls.router_url, tmp_path), cwd=REPO_ROOT / "router")
    wait_heartbeat(admin, redis_urls.keys, "r1", process)
    client = RouterClient(redis_client(redis_urls.agent_url), redis_urls.keys, timeout=30)
    try:
        assert client.ping() is True
        expected = {"status": "ok", "result": {"pong": True, "router_id": "r1"}, "outside_text": False}
        assert client.call("PING", {}, "console") == expected
    finally:
        client.close()


def test_sigkill_mid_note_then_restart_runs_it_at_most_once(redis_urls, admin, routers, tmp_path):
    keys = redis_urls.keys
    env = router_env(redis_urls.router_url, tmp_path)
    first = routers(env)
    wait_heartbeat(admin, keys, "r1", first)
    client = RouterClient(redis_client(redis_urls.agent_url), keys, timeout=60)
    outcome = {}
    caller = threading.Thread(
        target=lambda: outcome.update(client.call("SLOW_NOTE", {"text": "slow", "delay_seconds": 5}, "console")))
    caller.start()
    wait_until(lambda: admin.keys(keys.idempotency("*")), "the NOTE to start")
    first.process.kill()
    first.wait()
    second = routers(env)
    caller.join(timeout=90)
    client.close()
    assert second.process.poll() is None
    assert outcome["status"] in ("ok", "unknown")
    assert len(note_lines(tmp_path)) <= 1
    assert admin.llen(keys.processing("r1")) == 0


def test_sigterm_finishes_command_in_hand_and_exits_zero(redis_urls, admin, routers, tmp_path):
    keys = redis_urls.keys
    process = routers(router_env(redis_urls.router_url, tmp_path))
    wait_heartbeat(admin, keys, "r1", process)
    in_hand = push(admin, keys, "SLOW_NOTE", {"text": "in hand", "delay_seconds": 2})
    wait_until(lambda: admin.exists(keys.idempotency(in_hand)), "the NOTE to start")
    queued = push(admin, keys, "PING", {})
    process.signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert reply_of(admin, keys, in_hand, timeout=1)["status"] == "ok"
    assert [line["id"] for line in note_lines(tmp_path)] == [in_hand]
    assert admin.llen(keys.processing("r1")) == 0
    # Not lost: commands run concurrently, so the PING was answered beside the NOTE, or is still queued.
    still_queued = [json.loads(item)["id"] for item in admin.lrange(keys.command_queue, 0, -1)]
    assert still_queued == [queued] or reply_of(admin, keys, queued, timeout=1)["status"] == "ok"


def test_thousand_commands_three_routers_none_lost_none_duplicated(redis_urls, admin, routers, tmp_path):
    keys = redis_urls.keys
    envelopes = [CommandEnvelope.new("NOTE", {"text": f"n{i}"}, "t", ttl_seconds=600) for i in range(1000)]
    pipe = admin.pipeline(transaction=False)
    for envelope in envelopes:
        pipe.lpush(keys.command_queue, envelope.to_json())
    pipe.execute()
    # No router dies here: a production heartbeat TTL, so a starved heartbeat thread on a loaded
    # machine is not taken for a dead router (its commands in hand would be answered `unknown`).
    for n in range(3):
        routers(router_env(redis_urls.router_url, tmp_path, router_id=f"r{n}", ROUTER_HEARTBEAT_TTL="15"))
    statuses = [reply_of(admin, keys, e.id, timeout=120)["status"] for e in envelopes]
    assert statuses == ["ok"] * 1000
    ids = [line["id"] for line in note_lines(tmp_path)]
    assert sorted(ids) == sorted(e.id for e in envelopes)  # each exactly once
    assert admin.llen(keys.command_queue) == 0


def test_redis_restart_mid_run_loses_nothing_and_router_lives(routers, tmp_path):
    server = RedisServer()
    server.start()
    admin = server.admin_client()
    try:
        keys = server.keys
        process = routers(router_env(server.router_url, tmp_path))
        wait_heartbeat(admin, keys, "r1", process)
        before = [push(admin, keys, "NOTE", {"text": f"b{i}"}) for i in range(200)]
        wait_until(lambda: len(note_lines(tmp_path)) >= 20, "some notes to be written")
        server.restart()
        after = [push(admin, keys, "NOTE", {"text": f"a{i}"}) for i in range(20)]
        replies = {cid: reply_of(admin, keys, cid, timeout=120) for cid in before + after}
        assert process.process.poll() is None
        statuses = [r["status"] for r in replies.values()]
        assert set(statuses) <= {"ok", "unknown"}
        # At most the commands in hand when Redis went away (one lane: 4 at once) are unknown.
        assert statuses.count("unknown") <= 4
        ids = [line["id"] for line in note_lines(tmp_path)]
        assert len(ids) == len(set(ids))  # nothing ran twice
        assert {cid for cid, r in replies.items() if r["status"] == "ok"} <= set(ids)
        assert all(replies[cid]["status"] == "ok" for cid in after)
        # Every finished command's record survived the restart (AOF replay kept the writes).
        for cid, reply in replies.items():
            if reply["status"] == "ok":
                assert json.loads(admin.get(keys.idempotency(cid)) or "{}")["state"] == "done"
        assert admin.llen(keys.processing("r1")) == 0
        log = (tmp_path / "r1.log").read_text()
        # One line per outage: a restart may be seen as two (refused, then loading after a first
        # answer), but never a line per retry, and each ends with Redis reachable again.
        outages = re.findall(r"Redis unavailable|Redis reachable again", log)
        assert outages[:1] == ["Redis unavailable"] and len(outages) <= 4, outages
        assert outages == ["Redis unavailable", "Redis reachable again"] * (len(outages) // 2), outages
    finally:
        admin.close()
        server.cleanup()
