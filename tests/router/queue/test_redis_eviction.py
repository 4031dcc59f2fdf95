"""A Redis that may drop keys is refused, through real processes on a real redis-server with
`maxmemory` and `allkeys-lru` (a Redis shared with a cache): the router and the agent stop at start
saying why and how to fix it; a router whose Redis's policy is changed under it stops taking
commands, says why, and loses nothing (they wait in the queue and run once it is fixed)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.router.router_helpers import REPO_ROOT, RouterProcess, push, reply_of, router_env, wait_until
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    """A Redis of this module's own: its policy is changed by the tests."""
    redis_server = RedisServer(persistent=False)
    redis_server.start()
    yield redis_server
    redis_server.cleanup()


@pytest.fixture
def admin(server):
    client = server.admin_client()
    client.config_set("maxmemory", "0")
    client.config_set("maxmemory-policy", "noeviction")
    client.flushall()
    yield client
    client.config_set("maxmemory", "0")
    client.config_set("maxmemory-policy", "noeviction")
    client.flushall()
    client.close()


def evicting(admin):
    admin.config_set("maxmemory", str(64 * 1024 * 1024))
    admin.config_set("maxmemory-policy", "allkeys-lru")


def router_log(process, env):
    return process.log_path.read_text() + Path(env["ROUTER_LOG_FILE"]).read_text()


def test_router_refuses_an_evicting_redis_at_start_saying_why_and_how(server, admin, tmp_path):
    evicting(admin)
    env = router_env(server.router_url, tmp_path)
    process = RouterProcess(env)
    assert process.wait() == 2
    text = router_log(process, env)
    assert "maxmemory-policy is allkeys-lru" in text
    assert "maxmemory-policy noeviction" in text  # how to fix it
    assert "REDIS_ACCEPT_EVICTION=allkeys-lru" in text  # the one way to accept it
    assert not admin.exists(server.keys.router_heartbeat("r1"))


def test_router_runs_on_an_evicting_redis_only_when_its_policy_is_typed_and_says_so(server, admin, tmp_path):
    evicting(admin)
    wrong = router_env(server.router_url, tmp_path, "r1", REDIS_ACCEPT_EVICTION="allkeys-random")
    refused = RouterProcess(wrong)
    assert refused.wait() == 2  # another policy than the one accepted: refused all the same
    env = router_env(server.router_url, tmp_path, "r2", REDIS_ACCEPT_EVICTION="allkeys-lru")
    process = RouterProcess(env)
    try:
        command_id = push(admin, server.keys, "PING", {})
        assert reply_of(admin, server.keys, command_id)["status"] == "ok"
    finally:
        process.stop()
    assert "REDIS_ACCEPT_EVICTION=allkeys-lru: this Redis is accepted" in router_log(process, env)


def test_router_refuses_a_replica_given_as_the_primary(server, admin, tmp_path):
    primary = RedisServer(persistent=False)
    primary.start()
    try:
        admin.execute_command("REPLICAOF", "127.0.0.1", str(primary.port))
        env = router_env(server.router_url, tmp_path)
        process = RouterProcess(env)
        assert process.wait() == 2
        text = router_log(process, env)
        assert "is a replica (role:slave), not the primary" in text
    finally:
        admin.execute_command("REPLICAOF", "NO", "ONE")
        primary.cleanup()


def test_agent_refuses_an_evicting_redis_at_start(server, admin, workspace):
    evicting(admin)
    environ = {**os.environ, "REDIS_URL": server.agent_url, "OLLAMA_HOST": "http://127.0.0.1:9"}
    done = subprocess.run([sys.executable, "agent/start_agent.py"], input="hi\n", capture_output=True,
                          text=True, cwd=REPO_ROOT, env=environ, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the agent will not use this Redis" in done.stderr
    assert "maxmemory-policy is allkeys-lru" in done.stderr and "maxmemory-policy noeviction" in done.stderr
    status = subprocess.run([sys.executable, "agent/start_agent.py", "status"], capture_output=True,
                            text=True, cwd=REPO_ROOT, env=environ, timeout=60)
    assert "Redis must not hold SafeClaw's keys" in status.stdout, status.stdout + status.stderr
    assert status.returncode != 0


def beats(admin, key, count):
    """Wait for `count` new heartbeats of a router: each is a check of its Redis's policy."""
    seen = []
    for _ in range(count):
        last = json.loads(admin.get(key))["ts"]
        seen.append(wait_until(lambda last=last: (v := admin.get(key)) and json.loads(v)["ts"] > last
                               and json.loads(v), "the next heartbeat", 30))
    return seen[-1]


def test_policy_changed_under_a_running_router_stops_it_taking_and_loses_nothing(server, admin, tmp_path):
    keys = server.keys
    env = router_env(server.router_url, tmp_path)
    process = RouterProcess(env)
    try:
        first = push(admin, keys, "NOTE", {"text": "before"})
        assert reply_of(admin, keys, first)["status"] == "ok"
        evicting(admin)
        heartbeat = keys.router_heartbeat("r1")
        wait_until(lambda: "redis_refused" in json.loads(admin.get(heartbeat) or "{}"), "the router to refuse")
        beats(admin, heartbeat, 2)  # past any BLMOVE that was waiting when it refused
        queued = [push(admin, keys, "NOTE", {"text": f"while evicting {n}"}) for n in range(5)]
        value = beats(admin, heartbeat, 2)
        assert "maxmemory-policy is allkeys-lru" in value["redis_refused"]
        assert admin.llen(keys.command_queue) == 5  # not taken: still queued, nothing evicted by us
        assert process.process.poll() is None
        assert "router stops taking commands" in Path(env["ROUTER_LOG_FILE"]).read_text()
        admin.config_set("maxmemory-policy", "noeviction")
        assert [reply_of(admin, keys, command_id)["status"] for command_id in queued] == ["ok"] * 5
    finally:
        process.stop()
    texts = [json.loads(line)["text"] for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert sorted(texts) == ["before", *[f"while evicting {n}" for n in range(5)]]  # each once
    assert "takes commands again" in Path(env["ROUTER_LOG_FILE"]).read_text()
