"""A network partition between a router and its Redis, through real processes: a TCP proxy
(`tests.support.tcp_proxy`) that stops forwarding without closing anything, as a network that drops
packets does, and later forwards again (what it held first, as TCP's retransmissions arrive).

One Redis: router r1 reaches it only through the proxy, r2 directly; the proxy is cut mid-burst for
longer than r1's socket timeout, so r1's requests go unanswered, its heartbeat expires and r2 takes
over the commands r1 held (re-delivery), then the proxy is restored with r1's stale requests still
in it. No post is lost or made twice (counted by command id at the platform), every reply is ok,
not sent or unknown, and r1 comes back by itself (it alone answers posts afterwards).

Sentinel: the primary is partitioned from the routers, the Sentinel and its replicas (all reach it
through the proxy only); Sentinel promotes a replica, the routers follow it, and the old primary,
fenced by `min-replicas-to-write`, acknowledges no write once it is cut off; restored, it becomes a
replica of the new primary. Every post the platform got still has its record on the primary at the
end, so a re-delivery cannot post it twice."""

from __future__ import annotations

import json
import time

import pytest
import redis

from tests.router.router_helpers import RouterProcess, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.post_burst import Burst, outcome
from tests.support.redis_server import RedisServer
from tests.support.sentinel_redis import ReplicatedRedis
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow
TOKEN = "partition-masto-token"
POSTS = 120
CUT_AFTER = 30  # replies before the cut
SOCKET_TIMEOUT = 11  # the router's: its blocking wait (1 s) + 10 (router.queue.redis_io.connect)
CUT_SECONDS = SOCKET_TIMEOUT + 2
RECOVERY_SECONDS = 30


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token=TOKEN).start()
    yield fake
    fake.stop()


def router(url: str, tmp_path, name: str, mastodon, **extra: str) -> RouterProcess:
    (tmp_path / name).mkdir()
    return RouterProcess(router_env(url, tmp_path / name, name, MASTODON_INSTANCE=mastodon.url,
                                    MASTODON_TOKEN=TOKEN, ROUTER_QUOTAS="post=100000", **extra))


def log_of(tmp_path, name: str) -> str:
    return (tmp_path / name / f"{name}.log").read_text(errors="replace")


def test_a_router_cut_off_from_redis_mid_burst_comes_back_by_itself_nothing_lost_or_twice(mastodon, tmp_path,
                                                                                         capsys):
    server = RedisServer()
    server.start()
    proxy = TcpProxy(server.port)
    keys = server.keys
    cut_url = server.router_url.replace(f":{server.port}/", f":{proxy.listen_port}/")
    routers = [router(cut_url, tmp_path, "r1", mastodon), router(server.router_url, tmp_path, "r2", mastodon)]
    admin = server.admin_client()
    try:
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}")
        burst = Burst(server.agent_url, keys, POSTS).start()
        wait_until(lambda: burst.answered() >= CUT_AFTER, "the first replies")
        proxy.cut()
        burst.fault_at = time.monotonic()
        wait_until(lambda: not admin.exists(keys.router_heartbeat("r1")), "r1's heartbeat to expire", 30)
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - burst.fault_at)))
        proxy.restore()
        burst.join()
        result = outcome(burst, mastodon)
        assert result.first_ok_after is not None and result.first_ok_after < RECOVERY_SECONDS, result.line("slow")
        # r1 found Redis again by itself: with r2 stopped, it alone answers new posts.
        wait_until(lambda: admin.exists(keys.router_heartbeat("r1")), "r1's heartbeat again", RECOVERY_SECONDS)
        routers[1].stop()
        after = Burst(server.agent_url, keys, 6, threads=2).start()
        after.join(120)
        assert [reply["status"] for reply in after.replies.values()] == ["ok"] * 6, after.replies
        assert routers[0].process.poll() is None  # nobody restarted it
        r1_log = log_of(tmp_path, "r1")
        assert "Redis unavailable" in r1_log and "Redis reachable again" in r1_log, r1_log[-3000:]
        with capsys.disabled():
            print(result.line(f"partition of {CUT_SECONDS}s between a router and its Redis"))
    finally:
        admin.close()
        for process in routers:
            process.stop()
        proxy.stop()
        server.cleanup()


def records_of(conn: redis.Redis, keys, command_ids: list[str]) -> dict[str, str | None]:
    """Each command's idempotency record state on this server (None: no record)."""
    states: dict[str, str | None] = {}
    for command_id in command_ids:
        raw = conn.get(keys.idempotency(command_id))
        states[command_id] = json.loads(raw).get("state") if raw else None
    return states


def test_the_primary_partitioned_from_routers_and_sentinel_is_fenced_the_replica_takes_over(mastodon, tmp_path,
                                                                                            capsys):
    cluster = ReplicatedRedis(replicas=2, primary_behind_proxy=True, fenced=True)
    routers: list[RouterProcess] = []
    try:
        wait_until(lambda: cluster.replicas_in_sync(2), "Sentinel to see both replicas in sync")
        old, proxy = cluster.primary, cluster.proxy
        assert proxy is not None
        keys = old.keys
        routers = [router(cluster.url("router"), tmp_path, name, mastodon) for name in ("r1", "r2")]
        admin = old.admin_client()
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}")
        burst = Burst(cluster.url("agent"), keys, POSTS).start()
        wait_until(lambda: burst.answered() >= CUT_AFTER, "the first replies")
        proxy.cut()
        burst.fault_at = time.monotonic()
        # The old primary, seen directly (not through the proxy): fenced once its replicas are gone.
        wait_until(lambda: fenced(admin), "the old primary to refuse writes (min-replicas-to-write)", 20)
        fenced_after = time.monotonic() - burst.fault_at
        wait_until(lambda: cluster.primary_port() not in (None, proxy.listen_port), "Sentinel's failover", 60)
        promoted_after = time.monotonic() - burst.fault_at
        # Cut off, it stays fenced, while the burst goes on on the new primary.
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - burst.fault_at)))
        assert fenced(admin)
        admin.close()
        proxy.restore()
        wait_until(lambda: old_is_replica(old), "the old primary to become a replica", 60)
        burst.join()
        result = outcome(burst, mastodon)
        assert result.first_ok_after is not None and result.first_ok_after < RECOVERY_SECONDS, result.line("slow")
        assert [process.process.poll() for process in routers] == [None, None]
        # Every post the platform got has its record on the primary now: a re-delivery of any of
        # them is answered from it, never posted again.
        primary = cluster.server_at(cluster.primary_port() or 0).admin_client()
        try:
            posted_ids = [request.headers["idempotency-key"] for request in mastodon.posts()]
            missing = {i: s for i, s in records_of(primary, keys, posted_ids).items() if s is None}
        finally:
            primary.close()
        assert missing == {}, "posted commands with no record left on the primary"
        for name in ("r1", "r2"):
            assert "Redis primary 'safeclaw' changed from" in log_of(tmp_path, name)
        with capsys.disabled():
            print(result.line(f"primary partitioned {CUT_SECONDS}s (fenced after {fenced_after:.1f}s, "
                              f"replica promoted after {promoted_after:.1f}s)"))
    finally:
        for process in routers:
            process.stop()
        cluster.cleanup()


def fenced(admin: redis.Redis) -> bool:
    """A write on this server is refused for want of replicas (NOREPLICAS)."""
    try:
        admin.set("fence-probe", "1", ex=60)
    except redis.ResponseError as exc:
        return str(exc).startswith("NOREPLICAS") or "replicas" in str(exc).lower()
    return False


def old_is_replica(server) -> bool:
    client = server.admin_client()
    try:
        info = client.info("replication")
    except redis.RedisError:
        return False
    finally:
        client.close()
    return info.get("role") == "slave" and info.get("master_link_status") == "up"


def test_the_primary_cut_off_from_replicas_and_sentinel_with_the_routers_still_on_it_runs_nothing_undurable(
        mastodon, tmp_path, capsys):
    """The split a fence exists for: the primary loses its replicas and Sentinel, the routers and the
    agent still reach it. Sentinel promotes a replica on the other side; until the old primary
    refuses writes (`min-replicas-max-lag`) and the routers move, their claims there reach no
    replica, so with ROUTER_REDIS_MIN_REPLICAS=1 no post runs on them (`not sent`). Every post the
    platform got keeps its record on the primary that wins, and none is made twice. A limit of a
    split brain: a command queued before the cut and answered `not sent` on the cut-off primary is
    still in the winner's queue, and runs there (once): its `not sent` says it may
    (`router.queue.replica_wait`)."""
    cluster = ReplicatedRedis(replicas=2, primary_behind_proxy=True, fenced=True)
    routers: list[RouterProcess] = []
    try:
        wait_until(lambda: cluster.replicas_in_sync(2), "Sentinel to see both replicas in sync")
        old, proxy = cluster.primary, cluster.proxy
        assert proxy is not None
        keys = old.keys
        routers = [router(cluster.url("router"), tmp_path, name, mastodon, ROUTER_REDIS_MIN_REPLICAS="1")
                   for name in ("r1", "r2")]
        admin = old.admin_client()
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}")
        # A push acknowledged by the old primary just before its fence is lost with it: that caller
        # says unknown at its timeout, kept short here.
        burst = Burst(cluster.url("agent"), keys, POSTS, timeout=15).start()
        wait_until(lambda: burst.answered() >= CUT_AFTER, "the first replies")
        proxy.cut(logins=frozenset({"sentinel", "replica"}))
        burst.fault_at = time.monotonic()
        wait_until(lambda: fenced(admin), "the old primary to refuse writes (min-replicas-to-write)", 20)
        fenced_after = time.monotonic() - burst.fault_at
        wait_until(lambda: cluster.primary_port() not in (None, proxy.listen_port), "Sentinel's failover", 60)
        promoted_after = time.monotonic() - burst.fault_at
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - burst.fault_at)))
        admin.close()
        proxy.restore()
        wait_until(lambda: old_is_replica(old), "the old primary to become a replica", 60)
        burst.join()
        result = outcome(burst, mastodon, not_sent_is_final=False)
        assert result.first_ok_after is not None and result.first_ok_after < RECOVERY_SECONDS, result.line("slow")
        assert [process.process.poll() for process in routers] == [None, None]
        primary = cluster.server_at(cluster.primary_port() or 0).admin_client()
        try:
            posted_ids = [request.headers["idempotency-key"] for request in mastodon.posts()]
            missing = {i: s for i, s in records_of(primary, keys, posted_ids).items() if s is None}
        finally:
            primary.close()
        assert missing == {}, "posted commands with no record left on the primary"
        with capsys.disabled():
            print(result.line(f"primary cut off from its replicas and Sentinel, routers on it, "
                              f"ROUTER_REDIS_MIN_REPLICAS=1, {CUT_SECONDS}s (fenced after {fenced_after:.1f}s, "
                              f"replica promoted after {promoted_after:.1f}s)"))
    finally:
        for process in routers:
            process.stop()
        cluster.cleanup()
