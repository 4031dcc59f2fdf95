"""A Redis Cluster loses the master that holds SafeClaw's slot mid-burst, through real processes:
three masters each with a replica (`redis-server --cluster-enabled yes`, cluster-node-timeout 1 s),
two routers and the agent's router client on a `redis+cluster://` URL, posts to a fake Mastodon.
The master of the `{safeclaw}` slot is killed (SIGKILL) while posts are under way; the cluster
promotes its replica by itself. No person touches anything: no post is lost or made twice (counted
by command id at the platform), every reply is ok, not sent or unknown, and posting comes back.
The killed node is then started again and rejoins as a replica of the new master.

With `ROUTER_REDIS_MIN_REPLICAS=1` the killed node is started again as soon as its replica took over
(the new master has no replica until then: each post is answered `not sent` meanwhile, its claim on
no replica), and every post the platform got still has its record on the new master: no claim was
lost with the killed one, so no re-delivery can post twice."""

from __future__ import annotations

import time

import pytest

from tests.router.router_helpers import RouterProcess, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.post_burst import Burst, outcome
from tests.support.redis_cluster import RedisClusterSet, cluster_support

pytestmark = pytest.mark.slow
TOKEN = "cluster-failover-masto-token"
POSTS = 120
KILL_AFTER = 30  # replies before the slot's master is killed
RECOVERY_SECONDS = 30  # the bound: posting comes back with no person within this


@pytest.fixture
def cluster():
    why_not = cluster_support()
    if why_not:
        pytest.skip(f"no Redis Cluster on this machine: {why_not}")
    nodes = RedisClusterSet(replicas=1, node_timeout_ms=1000)
    try:
        yield nodes
    finally:
        nodes.cleanup()


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token=TOKEN).start()
    yield fake
    fake.stop()


@pytest.mark.parametrize("min_replicas", [0, 1], ids=["async", "wait-for-1"])
def test_the_slots_master_killed_mid_burst_its_replica_takes_over_nothing_lost_or_twice(cluster, mastodon,
                                                                                       tmp_path, capsys,
                                                                                       min_replicas):
    keys = cluster.keys
    master = cluster.holder(keys.command_queue)
    replica = cluster.replica_of(master)
    routers = []
    for name in ("r1", "r2"):
        (tmp_path / name).mkdir()
        routers.append(RouterProcess(router_env(cluster.url("router"), tmp_path / name, name,
                                                MASTODON_INSTANCE=mastodon.url, MASTODON_TOKEN=TOKEN,
                                                ROUTER_QUOTAS="post=100000",
                                                ROUTER_REDIS_MIN_REPLICAS=str(min_replicas))))
    admin = cluster.admin_client()
    try:
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}'s heartbeat")
        admin.close()
        burst = Burst(cluster.url("agent"), keys, POSTS).start()
        wait_until(lambda: burst.answered() >= KILL_AFTER, "the first replies")
        assert master.process is not None
        master.process.kill()  # SIGKILL: no goodbye, as a crashed machine
        master.process.wait()
        master.process = None
        burst.fault_at = time.monotonic()
        wait_until(lambda: cluster.holder(keys.command_queue).port == replica.port, "the replica's promotion", 30)
        promoted_after = time.monotonic() - burst.fault_at
        if min_replicas:
            master.start()  # the new master's replica-to-be: posts wait for it (not sent meanwhile)
        burst.join()
        result = outcome(burst, mastodon)
        assert result.first_ok_after is not None, "no post went through after the failover"
        assert result.first_ok_after < RECOVERY_SECONDS, result.line("recovery too slow")
        assert [router.process.poll() for router in routers] == [None, None]  # nobody restarted them
        # The killed node comes back and rejoins as a replica of the new master, by itself.
        if not min_replicas:
            master.start()
        wait_until(cluster.all_ok, "the old master back as a replica", 30)
        assert cluster.holder(keys.command_queue).port == replica.port
        if min_replicas:
            new_master = replica.admin_client()
            try:
                posted_ids = [request.headers["idempotency-key"] for request in mastodon.posts()]
                missing = [i for i in posted_ids if not new_master.exists(keys.idempotency(i))]
            finally:
                new_master.close()
            assert missing == [], "posted commands whose record was lost with the killed master"
        with capsys.disabled():
            print(result.line(f"cluster failover burst, ROUTER_REDIS_MIN_REPLICAS={min_replicas} (replica "
                              f"promoted {promoted_after:.1f}s after the kill)"))
    finally:
        for router in routers:
            router.stop()
