"""A replicated Redis behind Sentinel, through real processes: a primary, a replica and
`redis-server --sentinel`; two routers and the agent's router client on a `redis+sentinel://` URL;
posts to a fake Mastodon. The primary is killed mid-burst and brought back while the burst goes on
(as a primary with its old data, until Sentinel demotes it): no person touches anything, and still
no post is lost or made twice, every reply is ok, not sent or unknown, and posting comes back."""

from __future__ import annotations

import threading
import time

import pytest

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from tests.router.router_helpers import OWNER_TURN, RouterProcess, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.post_burst import not_sent, unique_texts
from tests.support.sentinel_redis import ReplicatedRedis

pytestmark = pytest.mark.slow
TOKEN = "failover-masto-token"
POSTS = 200
THREADS = 6
KILL_AFTER = 30  # replies before the primary is killed


@pytest.fixture
def replicated():
    cluster = ReplicatedRedis()
    try:
        wait_until(cluster.replica_in_sync, "Sentinel to see the replica in sync")
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token=TOKEN).start()
    yield fake
    fake.stop()


def start_routers(cluster, mastodon, tmp_path, **extra):
    routers = []
    for name in ("r1", "r2"):
        folder = tmp_path / name
        folder.mkdir()
        env = router_env(cluster.url("router"), folder, name, MASTODON_INSTANCE=mastodon.url,
                         MASTODON_TOKEN=TOKEN, ROUTER_QUOTAS="post=100000", **extra)
        routers.append(RouterProcess(env))
    return routers


class Burst:
    """`POSTS` distinct posts from `THREADS` agent-side callers, each on its own pool."""

    def __init__(self, url: str, keys) -> None:
        self.url, self.keys = url, keys
        self.replies: dict[str, dict] = {}
        self.first_ok_after: dict[str, float] = {}
        self.killed_at: float | None = None
        self._lock = threading.Lock()

    def run(self, texts: list[str]) -> None:
        client = RouterClient(redis_client(self.url), self.keys, timeout=45)
        try:
            for text in texts:
                sent_at = time.monotonic()
                reply = client.call("CREATE_POST", {"platform": "mastodon", "text": text}, "burst",
                                    origin=OWNER_TURN)
                with self._lock:
                    self.replies[text] = reply
                    if self.killed_at is not None and sent_at > self.killed_at and reply["status"] == "ok":
                        self.first_ok_after.setdefault("ok", time.monotonic() - self.killed_at)
        finally:
            client.conn.close()


def test_primary_killed_mid_burst_two_routers_follow_sentinel_with_no_person(replicated, mastodon, tmp_path,
                                                                              capsys):
    cluster = replicated
    routers = start_routers(cluster, mastodon, tmp_path)
    keys = cluster.primary.keys
    admin = cluster.primary.admin_client()
    try:
        for name in ("r1", "r2"):
            wait_until(lambda name=name: admin.exists(keys.router_heartbeat(name)), f"router {name}")
        admin.close()
        texts = unique_texts(POSTS, "post")
        burst = Burst(cluster.url("agent"), keys)
        threads = [threading.Thread(target=burst.run, args=(texts[i::THREADS],)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        wait_until(lambda: len(burst.replies) >= KILL_AFTER, "the first replies")
        old = cluster.primary
        old.process.kill()  # SIGKILL: no goodbye, as a crashed machine
        old.process.wait()
        old.process = None
        burst.killed_at = time.monotonic()
        wait_until(lambda: cluster.primary_port() not in (None, old.port), "Sentinel's failover", 60)
        old.start()  # back with its old data, a primary until Sentinel makes it a replica
        for thread in threads:
            thread.join(timeout=300)
        statuses = [reply["status"] for reply in burst.replies.values()]
        assert len(burst.replies) == POSTS
        odd = {text: r for text, r in burst.replies.items() if r["status"] not in ("ok", "unknown") and not not_sent(r)}
        assert odd == {}
        posted = [status["text"] for status in mastodon.statuses.values()]
        assert len(posted) == len(set(posted)), "a post made twice"
        # With ROUTER_REDIS_MIN_REPLICAS unset, a claim the failover lost (replication is
        # asynchronous) may run its command once more: the request carries the command's
        # Idempotency-Key again and the platform keeps one post (docs/deploy.md says so).
        keys_sent = [request.headers.get("idempotency-key") for request in mastodon.posts()]
        assert all(keys_sent) and len(set(keys_sent)) == len(posted), "a post request without its command's key"
        resent = len(keys_sent) - len(set(keys_sent))
        oks = [text for text, reply in burst.replies.items() if reply["status"] == "ok"]
        assert set(oks) <= set(posted), "a post answered ok is not on the platform"
        assert set(posted) <= set(texts)
        said_not_sent = {text: reply for text, reply in burst.replies.items() if not_sent(reply) and text in posted}
        assert said_not_sent == {}, "posts answered not sent are on the platform"
        assert [router.process.poll() for router in routers] == [None, None]  # nobody restarted them
        assert "ok" in burst.first_ok_after, "no post went through after the failover"
        # Every router logged the new primary in one line.
        for name in ("r1", "r2"):
            log_text = (tmp_path / name / f"{name}.log").read_text()
            assert log_text.count("Redis primary 'safeclaw' changed from") >= 1, log_text[-3000:]
        with capsys.disabled():
            counts = {s: statuses.count(s) for s in set(statuses)}
            print(f"\nfailover burst: {counts}; {len(posted)} posted; {resent} request(s) sent again "
                  f"with their command's key; first ok after the kill in {burst.first_ok_after['ok']:.1f}s")
    finally:
        for router in routers:
            router.stop()
