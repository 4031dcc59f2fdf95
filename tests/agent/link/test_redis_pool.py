"""The agent's one Redis pool: only the wiring opens connections, and a running agent's parts (the
loop's router client, the budget's summary, the approval desk, autonomy, the heartbeat, /status) all
talk to Redis through the one pool its entry point built, within a bounded number of connections."""

import ast
import os
import threading
import time
from pathlib import Path

from agent.app import build_service
from agent.config.settings import settings_from_config
from agent.link.redis_pool import MAX_CONNECTIONS
from agent.status.heartbeat import AgentHeartbeat
from tests.agent.mind.test_loop import tool

REPO = Path(__file__).resolve().parents[3]
# The only agent modules that may open a Redis connection: the wiring and the pool it builds.
WIRING = {"agent/app.py", "agent/link/redis_pool.py"}
OPENERS = {"from_url", "Redis", "StrictRedis", "ConnectionPool", "BlockingConnectionPool"}


def opened_connections(source: str) -> list[str]:
    """`name (line)` of each call that opens Redis (from_url, redis.Redis(), a pool) or reads a REDIS
    variable from the environment."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            reads_environment = name == "getenv" or (name == "get" and "environ" in ast.unparse(func))
            if name in OPENERS:
                found.append(f"{name} (line {node.lineno})")
            elif reads_environment and any(names_redis(arg) for arg in node.args):
                found.append(f"environment {ast.unparse(node)} (line {node.lineno})")
        elif isinstance(node, ast.Subscript) and "environ" in ast.unparse(node.value) and names_redis(node.slice):
            found.append(f"environment {ast.unparse(node)} (line {node.lineno})")
    return found


def names_redis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and "REDIS" in str(node.value)


def test_the_scan_sees_each_way_of_opening_redis():
    source = (
        "import os, redis\n"
        "a = redis.Redis.from_url(u)\n"
        "b = redis.Redis(host='h')\n"
        "c = redis.ConnectionPool(host='h')\n"
        "d = os.environ['REDIS_URL']\n"
        "e = os.environ.get('REDIS_URL')\n"
        "f = os.getenv('REDIS_URL')\n"
        "g = conn.get('REDIS_URL')\n"
    )
    assert [entry.split(" (")[0].split(" ")[0] for entry in opened_connections(source)] == [
        "from_url", "Redis", "ConnectionPool", "environment", "environment", "environment"
    ]


def test_no_agent_module_but_the_wiring_opens_redis():
    offenders = {}
    for path in sorted((REPO / "agent").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative not in WIRING:
            found = opened_connections(path.read_text(encoding="utf-8"))
            if found:
                offenders[relative] = found
    assert offenders == {}, "open Redis only in agent/app.py's pool (agent/link/redis_pool.py)"


def agent_connections(admin, since=frozenset()):
    """The agent user's connections as the server lists them (address -> id), leaving out the ids in
    `since` (the server is shared by the session's tests: earlier ones may still hold theirs)."""
    return {c["addr"]: c["id"] for c in admin.client_list() if c["user"] == "agent" and c["id"] not in since}


def pool_addresses(pool):
    """Where the pool's connections come from, as the server names a client (host:port)."""
    addresses = set()
    for conn in pool._connections:
        if conn._sock is not None:
            host, port = conn._sock.getsockname()[:2]
            addresses.add(f"{host}:{port}")
    return addresses


def test_a_running_agent_talks_to_redis_through_one_bounded_pool(redis_urls, workspace, tmp_path):
    env = {**os.environ, "REDIS_URL": redis_urls.agent_url}
    config = {"llm": {"provider": "scripted", "model": "s"}, "timeout": 1}
    settings = settings_from_config(config, tmp_path / "config.json", env)
    admin = redis_urls.admin_client()
    keys = redis_urls.keys
    earlier = frozenset(agent_connections(admin).values())
    service = build_service(settings)  # as start_agent builds the running agent
    pool = service.conn.connection_pool
    router = service.loop.router
    cycle = service.make_cycle()  # the autonomy channel's, on the same loop and pool
    heartbeat = AgentHeartbeat.from_settings(settings, service.conn, ["console"], service.loop.llm)
    parts = [router.conn, service.loop.llm.guard.publish.conn, service.desk.conn, heartbeat.conn]
    assert all(conn.connection_pool is pool for conn in parts)

    service.loop.llm.inner.enqueue(tool(("PING", {})), "Sent.")
    with heartbeat:
        reply = service.loop.run_turn("console", "ping the router")  # no router runs: no answer in 1 s
        assert "Sent." in reply.reply
        assert admin.llen(keys.command_queue) == 1  # the loop's command went out through the pool
        assert admin.get(keys.agent_cost) is not None  # the budget's summary for the dashboard
        assert service.desk.take() == [] and service.desk.in_flight() == []
        cycle.run_once()  # takes rule injections, then publishes its health
        assert admin.get(keys.agent_autonomy) is not None  # autonomy published its health
        deadline = time.monotonic() + 10
        while admin.get(keys.agent_heartbeat) is None:
            assert time.monotonic() < deadline, "no agent heartbeat"
            time.sleep(0.02)
        assert any(line.startswith("✓ Redis answers") for line in service.status_lines())

        # Many threads at once (channels, notices, /status) wait for a free connection, never open more.
        def busy() -> None:
            for _ in range(5):
                service.desk.take()
                service.status_lines()

        threads = [threading.Thread(target=busy) for _ in range(3 * MAX_CONNECTIONS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        opened = set(agent_connections(admin, earlier))
        assert 1 <= len(opened) <= MAX_CONNECTIONS
        assert opened == pool_addresses(pool)  # every connection the agent opened is the pool's
    service.conn.connection_pool.disconnect()
    assert not set(agent_connections(admin, earlier)) & opened
    admin.close()
