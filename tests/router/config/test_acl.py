"""The ACL matrix against a real redis-server 7: each allowed command works, each other is NOPERM."""

import subprocess
import sys

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from protocol.keys import MCP_LOGIN, Keys
from router.config.redis_acl import password_hash, render_acl

KEYS = Keys()
QUEUE = KEYS.command_queue
RESP = KEYS.response("c1")
PROC = KEYS.processing("r1")
MCP_QUEUE = KEYS.command_queue_of(MCP_LOGIN)
MCP_PROC = KEYS.processing_of(MCP_LOGIN, "r1")
MCP_RESP = KEYS.response_of(MCP_LOGIN, "mcp-c1")
HB = KEYS.router_heartbeat("r1")
QUOTA = f"{KEYS.router_prefix}quota:moltbook:post:20261122"
PACE = f"{KEYS.router_prefix}pace:moltbook:reply"
CIRCUIT = f"{KEYS.router_prefix}circuit:moltbook:open_until"


def client(url):
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)


@pytest.fixture
def users(redis_urls):
    agent, router = client(redis_urls.agent_url), client(redis_urls.router_url)
    admin = redis_urls.admin_client()
    yield agent, router, admin
    for c in (agent, router, admin):
        c.close()


AGENT_ALLOWED = [
    ("lpush queue", lambda c: c.lpush(QUEUE, "cmd")),
    ("llen queue", lambda c: c.llen(QUEUE)),
    ("blpop response", lambda c: c.blpop([RESP], timeout=0.01)),
    ("lpop response", lambda c: c.lpop(RESP)),
    ("del response", lambda c: c.delete(RESP)),
    ("set own heartbeat", lambda c: c.set(KEYS.agent_heartbeat, "{}", ex=30)),
    ("get own heartbeat", lambda c: c.get(KEYS.agent_heartbeat)),
    ("get router heartbeat", lambda c: c.get(HB)),
    ("scan router heartbeats", lambda c: c.scan(0, match=KEYS.router_heartbeat("*"))),
    ("ping", lambda c: c.ping()),
    ("zrange the approvals waiting", lambda c: c.zrange(KEYS.approvals_pending, 0, -1)),
    ("get the kill switch", lambda c: c.get(KEYS.kill_switch)),
]
AGENT_REFUSED = [
    ("set the kill switch", lambda c: c.set(KEYS.kill_switch, '{"on": false}')),
    ("del the kill switch", lambda c: c.delete(KEYS.kill_switch)),
    ("zadd the approvals waiting", lambda c: c.zadd(KEYS.approvals_pending, {"a1": 1.0})),
    ("zrem the approvals waiting", lambda c: c.zrem(KEYS.approvals_pending, "a1")),
    ("get an approval record (its code digest)", lambda c: c.get(KEYS.approval("a" * 32))),
    ("blmove queue", lambda c: c.blmove(QUEUE, PROC, 0.01)),
    ("lrange queue", lambda c: c.lrange(QUEUE, 0, -1)),
    ("rpop queue", lambda c: c.rpop(QUEUE)),
    ("del queue", lambda c: c.delete(QUEUE)),
    ("lpush response (forge a reply)", lambda c: c.lpush(RESP, "forged")),
    ("lpush the mcp queue (speak as the MCP client)", lambda c: c.lpush(MCP_QUEUE, "cmd")),
    ("llen the mcp queue", lambda c: c.llen(MCP_QUEUE)),
    ("blpop an mcp reply", lambda c: c.blpop([MCP_RESP], timeout=0.01)),
    ("lpop an mcp reply", lambda c: c.lpop(MCP_RESP)),
    ("del an mcp reply", lambda c: c.delete(MCP_RESP)),
    ("get idempotency", lambda c: c.get(KEYS.idempotency("c1"))),
    ("lrange dead letter", lambda c: c.lrange(KEYS.dead_letter, 0, -1)),
    ("lrange processing", lambda c: c.lrange(PROC, 0, -1)),
    ("set router heartbeat", lambda c: c.set(HB, "{}")),
    ("del router heartbeat", lambda c: c.delete(HB)),
    ("get arbitrary key", lambda c: c.get("other")),
    ("set arbitrary key", lambda c: c.set("other", "1")),
    ("keys", lambda c: c.keys("*")),
    ("flushall", lambda c: c.flushall()),
    ("config get", lambda c: c.config_get("*")),
    ("acl list", lambda c: c.acl_list()),
    ("subscribe", lambda c: c.execute_command("PUBLISH", "x", "y")),
    ("eval", lambda c: c.eval("return 1", 0)),
    ("reset a quota counter", lambda c: c.set(QUOTA, "0")),
    ("clear a pacing history", lambda c: c.zremrangebyscore(PACE, "-inf", "+inf")),
    ("close a circuit", lambda c: c.delete(CIRCUIT)),
]
ROUTER_ALLOWED = [
    ("blmove queue->processing", lambda c: c.blmove(QUEUE, PROC, 0.01, "RIGHT", "LEFT")),
    ("lmove processing->queue", lambda c: c.lmove(PROC, QUEUE, "LEFT", "LEFT")),
    ("llen queue", lambda c: c.llen(QUEUE)),
    ("lrange processing", lambda c: c.lrange(PROC, 0, -1)),
    ("lrem processing", lambda c: c.lrem(PROC, 1, "x")),
    ("set idempotency nx", lambda c: c.set(KEYS.idempotency("c1"), "started", nx=True, ex=60)),
    ("get idempotency", lambda c: c.get(KEYS.idempotency("c1"))),
    ("incr attempts", lambda c: c.incr(KEYS.attempts("c1"))),
    ("lpush dead letter", lambda c: c.lpush(KEYS.dead_letter, "x")),
    ("ltrim dead letter", lambda c: c.ltrim(KEYS.dead_letter, 0, 99)),
    ("set heartbeat", lambda c: c.set(HB, "{}", ex=10)),
    ("scan", lambda c: c.scan(0, match=KEYS.processing("*"))),
    ("lpush response", lambda c: c.lpush(RESP, "reply")),
    ("expire response", lambda c: c.expire(RESP, 60)),
    ("blmove the mcp queue->its processing", lambda c: c.blmove(MCP_QUEUE, MCP_PROC, 0.01, "RIGHT", "LEFT")),
    ("lmove mcp processing->the mcp queue", lambda c: c.lmove(MCP_PROC, MCP_QUEUE, "LEFT", "LEFT")),
    ("llen the mcp queue", lambda c: c.llen(MCP_QUEUE)),
    ("lrange + lrem mcp processing", lambda c: (c.lrange(MCP_PROC, 0, -1), c.lrem(MCP_PROC, 1, "x"))),
    ("scan mcp processing lists", lambda c: c.scan(0, match=KEYS.processing_of(MCP_LOGIN, "*"))),
    ("lpush + expire an mcp reply", lambda c: (c.lpush(MCP_RESP, "reply"), c.expire(MCP_RESP, 60))),
    ("pipeline without multi",
     lambda c: c.pipeline(transaction=False).lpush(RESP, "r").expire(RESP, 5).execute()),
    ("incr/decr a quota counter", lambda c: c.pipeline(transaction=False).incr(QUOTA).decr(QUOTA).execute()),
    ("zadd/zrange/zrem a pacing history",
     lambda c: c.pipeline(transaction=False).zadd(PACE, {"m": 1.0}).zrange(PACE, 0, -1, withscores=True)
     .zremrangebyscore(PACE, "-inf", 0).zrem(PACE, "m").execute()),
    ("set get / getdel a circuit", lambda c: (c.set(CIRCUIT, "1", get=True), c.getdel(CIRCUIT))),
    ("lpush + ltrim an owner notice",
     lambda c: c.pipeline(transaction=False).lpush(KEYS.owner_notices, "{}").ltrim(KEYS.owner_notices, 0, 9)
     .execute()),
]
ROUTER_REFUSED = [
    ("lpush queue (inject a command)", lambda c: c.lpush(QUEUE, "cmd")),
    ("rpush queue", lambda c: c.rpush(QUEUE, "cmd")),
    ("del queue", lambda c: c.delete(QUEUE)),
    ("lrange queue", lambda c: c.lrange(QUEUE, 0, -1)),
    ("blpop response (steal a reply)", lambda c: c.blpop([RESP], timeout=0.01)),
    ("lpush the mcp queue (inject a command)", lambda c: c.lpush(MCP_QUEUE, "cmd")),
    ("lrange the mcp queue", lambda c: c.lrange(MCP_QUEUE, 0, -1)),
    ("blpop an mcp reply", lambda c: c.blpop([MCP_RESP], timeout=0.01)),
    ("get response", lambda c: c.lrange(RESP, 0, -1)),
    ("get agent heartbeat", lambda c: c.get(KEYS.agent_heartbeat)),
    ("set arbitrary key", lambda c: c.set("other", "1")),
    ("keys", lambda c: c.keys("*")),
    ("flushall", lambda c: c.flushall()),
    ("config set", lambda c: c.config_set("appendonly", "no")),
    ("eval", lambda c: c.eval("return 1", 0)),
    ("multi (see router.config.redis_acl: AOF replay drops transactions)", lambda c: c.execute_command("MULTI")),
    ("zadd outside its prefix", lambda c: c.zadd("other", {"m": 1.0})),
    ("decr the agent's keys", lambda c: c.decr(KEYS.agent_heartbeat)),
    ("lrange owner notices (write-only)", lambda c: c.lrange(KEYS.owner_notices, 0, -1)),
]


@pytest.mark.parametrize(("name", "op"), AGENT_ALLOWED, ids=[n for n, _ in AGENT_ALLOWED])
def test_agent_allowed(users, name, op):
    op(users[0])


@pytest.mark.parametrize(("name", "op"), AGENT_REFUSED, ids=[n for n, _ in AGENT_REFUSED])
def test_agent_refused(users, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(users[0])


@pytest.mark.parametrize(("name", "op"), ROUTER_ALLOWED, ids=[n for n, _ in ROUTER_ALLOWED])
def test_router_allowed(users, name, op):
    op(users[1])


@pytest.mark.parametrize(("name", "op"), ROUTER_REFUSED, ids=[n for n, _ in ROUTER_REFUSED])
def test_router_refused(users, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(users[1])


def test_default_user_is_off(redis_urls):
    anonymous = redis.Redis(port=redis_urls.server.port, socket_timeout=5, retry=Retry(NoBackoff(), 0))
    with pytest.raises((redis.exceptions.AuthenticationError, redis.exceptions.NoPermissionError)):
        anonymous.ping()
    anonymous.close()


def test_wrong_password_refused(redis_urls):
    bad = redis.Redis(port=redis_urls.server.port, username="agent", password="wrong", socket_timeout=5,
                      retry=Retry(NoBackoff(), 0))
    with pytest.raises(redis.exceptions.AuthenticationError):
        bad.ping()
    bad.close()


def test_file_holds_only_password_hashes():
    text = render_acl(KEYS, "agent-clear-pw", "router-clear-pw")
    assert "agent-clear-pw" not in text and "router-clear-pw" not in text
    assert password_hash("agent-clear-pw") in text
    assert text.startswith("user default off")


def test_cli_writes_file(tmp_path):
    (tmp_path / "a").write_text("apw\n")
    (tmp_path / "r").write_text("rpw\n")
    out = tmp_path / "users.acl"
    subprocess.run(
        [sys.executable, "-m", "router.config.redis_acl", "--agent-password-file", str(tmp_path / "a"),
         "--router-password-file", str(tmp_path / "r"), "--out", str(out)],
        check=True, capture_output=True,
    )
    assert out.read_text() == render_acl(KEYS, "apw", "rpw")


def test_cli_rejects_empty_password_file(tmp_path):
    (tmp_path / "a").write_text("\n")
    (tmp_path / "r").write_text("rpw\n")
    done = subprocess.run(
        [sys.executable, "-m", "router.config.redis_acl", "--agent-password-file", str(tmp_path / "a"),
         "--router-password-file", str(tmp_path / "r"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )
    assert done.returncode != 0 and "is empty" in done.stderr
