"""SafeClaw on a real Redis Cluster: three `redis-server --cluster-enabled yes` masters on loopback,
two routers, the agent's router client and the dashboard's reads on a `redis+cluster://` URL, posts
to a fake Mastodon.
Every key shares one hash tag (protocol.keys), so the claim's script, BLMOVE into the processing
list and each round trip of several keys are legal on a cluster: a burst of posts is each made
exactly once and every reply comes back."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from dashboard.state import RouterKeys, read_raw
from protocol.redis_link import RedisUnsafe, async_client, sync_client
from protocol.redis_safety import current_eviction
from tests.router.router_helpers import OWNER_TURN, RouterProcess, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.post_burst import unique_texts
from tests.support.redis_cluster import RedisClusterSet, cluster_support

pytestmark = pytest.mark.slow
TOKEN = "cluster-masto-token"
POSTS = 40
THREADS = 4


@pytest.fixture
def cluster():
    why_not = cluster_support()
    if why_not:
        pytest.skip(f"no Redis Cluster on this machine: {why_not}")
    nodes = RedisClusterSet()
    try:
        yield nodes
    finally:
        nodes.cleanup()


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token=TOKEN).start()
    yield fake
    fake.stop()


def test_a_burst_of_posts_through_a_three_node_cluster_is_posted_once_each_and_answered(cluster, mastodon,
                                                                                         tmp_path):
    keys = cluster.keys
    routers = []
    for name in ("r1", "r2"):
        (tmp_path / name).mkdir()
        routers.append(RouterProcess(router_env(cluster.url("router"), tmp_path / name, name,
                                                MASTODON_INSTANCE=mastodon.url, MASTODON_TOKEN=TOKEN,
                                                ROUTER_QUOTAS="post=100000")))
    admin = cluster.admin_client()
    try:
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}'s heartbeat")
        texts = unique_texts(POSTS, "cluster post")
        replies: dict[str, dict] = {}
        lock = threading.Lock()

        def send(batch: list[str]) -> None:
            client = RouterClient(redis_client(cluster.url("agent")), keys, timeout=60)
            try:
                for text in batch:
                    reply = client.call("CREATE_POST", {"platform": "mastodon", "text": text}, "burst",
                                        origin=OWNER_TURN)
                    with lock:
                        replies[text] = reply
            finally:
                client.conn.close()

        threads = [threading.Thread(target=send, args=(texts[i::THREADS],)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert {text: reply["status"] for text, reply in replies.items()} == dict.fromkeys(texts, "ok"), replies
        posted = sorted(status["text"] for status in mastodon.statuses.values())
        assert posted == sorted(texts)  # each exactly once
        assert len(mastodon.posts()) == POSTS  # no post request sent twice
        # The keys really live on the cluster: one slot, served by one of the three masters.
        slot = admin.cluster_keyslot(keys.command_queue)
        assert admin.cluster_keyslot(keys.idempotency("any")) == slot
        assert [router.process.poll() for router in routers] == [None, None]
        # The dashboard's one round trip, as the control user, reads the same state from the cluster.
        control = sync_client(cluster.url("control"), decode_responses=True, socket_timeout=5)
        try:
            raw = read_raw(control, keys, RouterKeys(keys).get(control))
        finally:
            control.close()
        assert raw["queue"] == 0 and raw["dead"] == 0 and len(raw["routers"]) == 2
    finally:
        admin.close()
        for router in routers:
            router.stop()


def test_every_node_is_checked_an_evicting_node_refused_by_both_kinds_of_client(cluster):
    node = cluster.nodes[1]
    admin = node.admin_client()
    admin.config_set("maxmemory", "100mb")
    admin.config_set("maxmemory-policy", "allkeys-lru")
    admin.close()
    sync = sync_client(cluster.url("router"), decode_responses=False, socket_timeout=5)
    with pytest.raises(RedisUnsafe, match="maxmemory-policy is allkeys-lru"):
        sync.execute_command("PING", target_nodes=sync.get_node("127.0.0.1", node.port))
    sync.close()

    async def mcp_ping() -> None:
        client = async_client(cluster.url("mcp"), decode_responses=True)
        try:
            await client.initialize()
            target = client.get_node("127.0.0.1", node.port)
            assert target is not None
            await client.execute_command("PING", target_nodes=target)
        finally:
            await client.aclose()

    with pytest.raises(RedisUnsafe, match="maxmemory-policy is allkeys-lru"):
        asyncio.run(mcp_ping())


def test_a_running_router_asks_the_node_that_holds_safeclaws_slot_whether_it_evicts(cluster):
    conn = sync_client(cluster.url("router"), decode_responses=False, socket_timeout=5)
    try:
        assert current_eviction(conn, "the cluster") is None
        holder = conn.get_node_from_key(cluster.keys.command_queue)
        node = next(node for node in cluster.nodes if node.port == holder.port)
        admin = node.admin_client()
        admin.config_set("maxmemory", "100mb")
        admin.config_set("maxmemory-policy", "volatile-lru")
        admin.close()
        assert "maxmemory-policy is volatile-lru" in (current_eviction(conn, "the cluster") or "")
    finally:
        conn.close()
