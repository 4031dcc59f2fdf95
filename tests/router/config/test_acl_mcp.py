"""The `mcp` user (the MCP server) against a real redis-server: it may push to its own queue only
and read only its own replies, never the agent's queue or replies, nothing of the router's or
the owner's."""

import pytest
import redis

from protocol.keys import AGENT_LOGIN, MCP_LOGIN, Keys

KEYS = Keys()
OWN_QUEUE = KEYS.command_queue_of(MCP_LOGIN)
OWN_REPLY = KEYS.response_of(MCP_LOGIN, "mcp-0f3a")
AGENT_REPLY = KEYS.response_of(AGENT_LOGIN, "0f3a9b")

ALLOWED = [
    ("lpush its own queue", lambda c: c.lpush(OWN_QUEUE, "cmd")),
    ("blpop its own reply", lambda c: c.blpop([OWN_REPLY], timeout=0.01)),
    ("lpop its own reply", lambda c: c.lpop(OWN_REPLY)),
    ("del its own reply", lambda c: c.delete(OWN_REPLY)),
    ("get a router heartbeat", lambda c: c.get(KEYS.router_heartbeat("r1"))),
    ("scan router heartbeats", lambda c: c.scan(0, match=KEYS.router_heartbeat("*"))),
    ("ping", lambda c: c.ping()),
]
REFUSED = [
    ("lpush the agent's queue (speak as the agent)", lambda c: c.lpush(KEYS.command_queue, "cmd")),
    ("blpop the agent's reply", lambda c: c.blpop([AGENT_REPLY], timeout=0.01)),
    ("lpop the agent's reply", lambda c: c.lpop(AGENT_REPLY)),
    ("lpop an mcp- id under the agent's replies", lambda c: c.lpop(KEYS.response("mcp-0f3a"))),
    ("forge its own reply", lambda c: c.lpush(OWN_REPLY, "forged")),
    ("read its queue", lambda c: c.lrange(OWN_QUEUE, 0, -1)),
    ("take from its queue", lambda c: c.rpop(OWN_QUEUE)),
    ("read the agent's queue", lambda c: c.lrange(KEYS.command_queue, 0, -1)),
    ("take from the agent's queue", lambda c: c.rpop(KEYS.command_queue)),
    ("read a router's list of its queue", lambda c: c.lrange(KEYS.processing_of(MCP_LOGIN, "r1"), 0, -1)),
    ("turn off the kill switch", lambda c: c.delete(KEYS.kill_switch)),
    ("read the kill switch", lambda c: c.get(KEYS.kill_switch)),
    ("decide an approval", lambda c: c.set(KEYS.approval_decision("a1"), "{}")),
    ("push a decided approval", lambda c: c.lpush(KEYS.approvals_decided, "a1")),
    ("reset a quota", lambda c: c.set(f"{KEYS.router_prefix}quota:x:post:20261126", "0")),
    ("read an idempotency record", lambda c: c.get(KEYS.idempotency("c1"))),
    ("write the agent's heartbeat", lambda c: c.set(KEYS.agent_heartbeat, "{}")),
    ("read the owner's notices", lambda c: c.lrange(KEYS.owner_notices, 0, -1)),
    ("read the audit stream", lambda c: c.xrange(KEYS.audit_stream)),
    ("keys", lambda c: c.keys("*")),
    ("flushall", lambda c: c.flushall()),
]


@pytest.fixture
def mcp(redis_urls):
    client = redis.Redis.from_url(redis_urls.mcp_url, decode_responses=True, socket_timeout=5)
    yield client
    client.close()


@pytest.mark.parametrize(("name", "op"), ALLOWED, ids=[n for n, _ in ALLOWED])
def test_mcp_allowed(mcp, name, op):
    op(mcp)


@pytest.mark.parametrize(("name", "op"), REFUSED, ids=[n for n, _ in REFUSED])
def test_mcp_refused(mcp, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(mcp)
