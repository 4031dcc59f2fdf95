"""A fenced primary's NOREPLICAS is "reconnect through Sentinel", for the sync clients (router,
agent, dashboard) and the async one (the MCP server) alike: a real primary, replica and Sentinel."""

from __future__ import annotations

import asyncio

import pytest
import redis

from protocol.redis_link import async_client, sync_client
from protocol.redis_sentinel import PrimaryFenced
from tests.router.router_helpers import wait_until
from tests.support.sentinel_redis import ReplicatedRedis

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fenced():
    """The primary asks for more replicas than it has: every write answers NOREPLICAS."""
    cluster = ReplicatedRedis()
    try:
        wait_until(cluster.replica_in_sync, "Sentinel to see the replica in sync")
        admin = cluster.primary.admin_client()
        admin.config_set("min-replicas-to-write", 2)
        admin.close()
        yield cluster
    finally:
        cluster.cleanup()


def test_a_sync_client_takes_noreplicas_as_a_fenced_primary_and_reconnects(fenced):
    client = sync_client(fenced.url("agent"), decode_responses=True, socket_timeout=5)
    try:
        with pytest.raises(PrimaryFenced, match="reconnecting through Sentinel"):
            client.lpush(fenced.primary.keys.command_queue, "x")
        assert isinstance(PrimaryFenced("x"), redis.ConnectionError)  # waited out as Redis unavailable
        assert client.llen(fenced.primary.keys.command_queue) == 0  # reads go on; nothing was written
    finally:
        client.close()


def test_the_mcp_servers_async_client_takes_noreplicas_as_a_fenced_primary(fenced):
    async def push() -> None:
        client = async_client(fenced.url("agent"), decode_responses=True)
        try:
            await client.lpush(fenced.primary.keys.command_queue, "x")
        finally:
            await client.aclose()

    with pytest.raises(PrimaryFenced, match="reconnecting through Sentinel"):
        asyncio.run(push())


def test_another_refusal_stays_a_refusal(fenced):
    client = sync_client(fenced.url("agent"), decode_responses=True, socket_timeout=5)
    try:
        with pytest.raises(redis.ResponseError) as refused:
            client.execute_command("FLUSHALL")  # not the agent's to run: NOPERM
        assert not isinstance(refused.value, PrimaryFenced)
    finally:
        client.close()
