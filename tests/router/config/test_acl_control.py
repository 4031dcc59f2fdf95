"""The control-plane part of the ACL matrix against a real redis-server 7.

The `control` user (dashboard, ./safeclaw approvals) reads status and writes only decisions, the
kill switch and rule injections; the agent can neither decide nor touch the kill switch; the router
gets exactly its side of approvals, audit and notices.
"""

import pytest
import redis

from protocol.keys import MCP_LOGIN, Keys

KEYS = Keys()
QUEUE = KEYS.command_queue
HB = KEYS.router_heartbeat("r1")
APPROVAL = KEYS.approval("a1")
DECISION = KEYS.approval_decision("a1")


def client(url):
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)


@pytest.fixture
def users(redis_urls):
    made = {
        "agent": client(redis_urls.agent_url),
        "router": client(redis_urls.router_url),
        "control": client(redis_urls.control_url),
    }
    yield made
    for c in made.values():
        c.close()


CONTROL_ALLOWED = [
    ("get router heartbeat", lambda c: c.get(HB)),
    ("scan router heartbeats", lambda c: c.scan(0, match=KEYS.router_heartbeat("*"))),
    ("get agent heartbeat", lambda c: c.get(KEYS.agent_heartbeat)),
    ("get agent cost", lambda c: c.get(KEYS.agent_cost)),
    ("get autonomy health", lambda c: c.get(KEYS.agent_autonomy)),
    ("llen queue (depth)", lambda c: c.llen(QUEUE)),
    ("llen dead letter (count)", lambda c: c.llen(KEYS.dead_letter)),
    ("xrevrange audit", lambda c: c.xrevrange(KEYS.audit_stream, count=10)),
    ("xread audit", lambda c: c.xread({KEYS.audit_stream: "0-0"}, count=1)),
    ("xlen audit", lambda c: c.xlen(KEYS.audit_stream)),
    ("zrange pending approvals", lambda c: c.zrange(KEYS.approvals_pending, 0, -1)),
    ("get approval record", lambda c: c.get(APPROVAL)),
    ("set decision nx", lambda c: c.set(DECISION, "{}", nx=True, ex=60)),
    ("get decision", lambda c: c.get(DECISION)),
    ("lpush decided", lambda c: c.lpush(KEYS.approvals_decided, "a1")),
    ("set kill switch", lambda c: c.set(KEYS.kill_switch, '{"on": true}')),
    ("get kill switch", lambda c: c.get(KEYS.kill_switch)),
    ("del kill switch", lambda c: c.delete(KEYS.kill_switch)),
    ("lpush rule injection", lambda c: c.lpush(KEYS.rule_injections, "{}")),
    ("lrange rule injections", lambda c: c.lrange(KEYS.rule_injections, 0, -1)),
    ("ping", lambda c: c.ping()),
]
CONTROL_REFUSED = [
    ("lpush queue (push a command)", lambda c: c.lpush(QUEUE, "cmd")),
    ("rpush queue", lambda c: c.rpush(QUEUE, "cmd")),
    ("lrange queue (read commands)", lambda c: c.lrange(QUEUE, 0, -1)),
    ("blmove queue", lambda c: c.blmove(QUEUE, KEYS.processing("x"), 0.01)),
    ("get idempotency record", lambda c: c.get(KEYS.idempotency("c1"))),
    ("lrange dead letter (contents)", lambda c: c.lrange(KEYS.dead_letter, 0, -1)),
    ("lrange processing", lambda c: c.lrange(KEYS.processing("r1"), 0, -1)),
    ("blpop a reply", lambda c: c.blpop([KEYS.response("c1")], timeout=0.01)),
    ("lpush a reply", lambda c: c.lpush(KEYS.response("c1"), "forged")),
    ("lpush the mcp queue", lambda c: c.lpush(KEYS.command_queue_of(MCP_LOGIN), "cmd")),
    ("blpop an mcp reply", lambda c: c.blpop([KEYS.response_of(MCP_LOGIN, "mcp-c1")], timeout=0.01)),
    ("set approval record (forge a command)", lambda c: c.set(APPROVAL, "{}")),
    ("del approval record", lambda c: c.delete(APPROVAL)),
    ("zadd pending", lambda c: c.zadd(KEYS.approvals_pending, {"a1": 1})),
    ("zrem pending", lambda c: c.zrem(KEYS.approvals_pending, "a1")),
    ("del decision (undo a decision)", lambda c: c.delete(DECISION)),
    ("lrange decided", lambda c: c.lrange(KEYS.approvals_decided, 0, -1)),
    ("xadd audit (forge history)", lambda c: c.xadd(KEYS.audit_stream, {"line": "x"})),
    ("xtrim audit", lambda c: c.xtrim(KEYS.audit_stream, maxlen=0)),
    ("del audit", lambda c: c.delete(KEYS.audit_stream)),
    ("set router heartbeat", lambda c: c.set(HB, "{}")),
    ("set agent heartbeat", lambda c: c.set(KEYS.agent_heartbeat, "{}")),
    ("set agent cost", lambda c: c.set(KEYS.agent_cost, "{}")),
    ("lrange owner notices", lambda c: c.lrange(KEYS.owner_notices, 0, -1)),
    ("get arbitrary key", lambda c: c.get("other")),
    ("keys", lambda c: c.keys("*")),
    ("flushall", lambda c: c.flushall()),
    ("config get", lambda c: c.config_get("*")),
    ("eval", lambda c: c.eval("return 1", 0)),
    ("multi", lambda c: c.execute_command("MULTI")),
]
AGENT_ALLOWED = [
    # Which approvals wait (ids only; the records stay unreadable): /approvals and
    # `./safeclaw approvals` read one list.
    ("zrange pending", lambda c: c.zrange(KEYS.approvals_pending, 0, -1)),
    (
        "lmove a notice in flight",
        lambda c: c.lmove(KEYS.owner_notices, KEYS.owner_notices_inflight, "RIGHT", "LEFT"),
    ),
    ("lrange notices in flight", lambda c: c.lrange(KEYS.owner_notices_inflight, 0, -1)),
    ("lrem a delivered notice", lambda c: c.lrem(KEYS.owner_notices_inflight, 1, "x")),
    ("lrange rule injections", lambda c: c.lrange(KEYS.rule_injections, 0, -1)),
    ("lrem an applied rule injection", lambda c: c.lrem(KEYS.rule_injections, -1, "x")),
    ("set own cost summary", lambda c: c.set(KEYS.agent_cost, "{}")),
]
AGENT_REFUSED = [
    ("set kill switch", lambda c: c.set(KEYS.kill_switch, '{"on": false}')),
    ("del kill switch", lambda c: c.delete(KEYS.kill_switch)),
    ("set decision", lambda c: c.set(DECISION, '{"decision": "approve"}')),
    ("lpush decided", lambda c: c.lpush(KEYS.approvals_decided, "a1")),
    ("get approval record", lambda c: c.get(APPROVAL)),
    ("set approval record", lambda c: c.set(APPROVAL, "{}")),
    ("zadd pending (hold its own command)", lambda c: c.zadd(KEYS.approvals_pending, {"a1": 1})),
    ("zrem pending (drop a held command)", lambda c: c.zrem(KEYS.approvals_pending, "a1")),
    ("lpush rule injection (rules only the owner writes)", lambda c: c.lpush(KEYS.rule_injections, "{}")),
    ("lpush a notice (forge an owner notice)", lambda c: c.lpush(KEYS.owner_notices, "{}")),
    ("xadd audit", lambda c: c.xadd(KEYS.audit_stream, {"line": "x"})),
    ("xrange audit", lambda c: c.xrange(KEYS.audit_stream)),
]
ROUTER_ALLOWED = [
    ("get kill switch", lambda c: c.get(KEYS.kill_switch)),
    ("set approval record", lambda c: c.set(APPROVAL, "{}", ex=60)),
    ("get approval record", lambda c: c.get(APPROVAL)),
    ("zadd pending", lambda c: c.zadd(KEYS.approvals_pending, {"a1": 1})),
    ("zrangebyscore pending", lambda c: c.zrangebyscore(KEYS.approvals_pending, "-inf", "+inf")),
    ("zrem pending", lambda c: c.zrem(KEYS.approvals_pending, "a1")),
    ("get decision", lambda c: c.get(DECISION)),
    ("set decision nx (a relayed owner decision)", lambda c: c.set(DECISION, "{}", nx=True, ex=60)),
    (
        "lmove decided -> own list",
        lambda c: c.lmove(KEYS.approvals_decided, KEYS.approvals_taken("r1"), "RIGHT", "LEFT"),
    ),
    ("lrange own decided list", lambda c: c.lrange(KEYS.approvals_taken("r1"), 0, -1)),
    ("lrem own decided list", lambda c: c.lrem(KEYS.approvals_taken("r1"), 1, "a1")),
    ("xadd audit", lambda c: c.xadd(KEYS.audit_stream, {"line": "x"}, maxlen=100, approximate=True)),
    ("xrevrange audit (audit verify reads the copy's newest lines)", lambda c: c.xrevrange(KEYS.audit_stream, count=1)),
    ("lpush notice", lambda c: c.lpush(KEYS.owner_notices, "{}")),
    ("ltrim notices", lambda c: c.ltrim(KEYS.owner_notices, 0, 999)),
]
ROUTER_REFUSED = [
    ("set kill switch (only the owner lifts it)", lambda c: c.set(KEYS.kill_switch, '{"on": false}')),
    ("del kill switch", lambda c: c.delete(KEYS.kill_switch)),
    ("xrange audit", lambda c: c.xrange(KEYS.audit_stream)),
    ("del audit", lambda c: c.delete(KEYS.audit_stream)),
    ("lpush rule injection", lambda c: c.lpush(KEYS.rule_injections, "{}")),
    ("lrange notices", lambda c: c.lrange(KEYS.owner_notices, 0, -1)),
    ("get agent cost", lambda c: c.get(KEYS.agent_cost)),
]


def _ids(cases):
    return [name for name, _ in cases]


@pytest.mark.parametrize(("name", "op"), CONTROL_ALLOWED, ids=_ids(CONTROL_ALLOWED))
def test_control_allowed(users, name, op):
    op(users["control"])


@pytest.mark.parametrize(("name", "op"), CONTROL_REFUSED, ids=_ids(CONTROL_REFUSED))
def test_control_refused(users, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(users["control"])


@pytest.mark.parametrize(("name", "op"), AGENT_ALLOWED, ids=_ids(AGENT_ALLOWED))
def test_agent_allowed_control_plane_keys(users, name, op):
    op(users["agent"])


@pytest.mark.parametrize(("name", "op"), AGENT_REFUSED, ids=_ids(AGENT_REFUSED))
def test_agent_refused_control_plane_keys(users, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(users["agent"])


@pytest.mark.parametrize(("name", "op"), ROUTER_ALLOWED, ids=_ids(ROUTER_ALLOWED))
def test_router_allowed_control_plane_keys(users, name, op):
    op(users["router"])


@pytest.mark.parametrize(("name", "op"), ROUTER_REFUSED, ids=_ids(ROUTER_REFUSED))
def test_router_refused_control_plane_keys(users, name, op):
    with pytest.raises(redis.exceptions.NoPermissionError):
        op(users["router"])


def test_first_decision_wins_for_control(users):
    """SET NX: a second decision (approve twice, or approve then deny) changes nothing."""
    control = users["control"]
    assert control.set(DECISION, '{"decision": "approve"}', nx=True, ex=60)
    assert not control.set(DECISION, '{"decision": "deny"}', nx=True, ex=60)
    assert control.get(DECISION) == '{"decision": "approve"}'
