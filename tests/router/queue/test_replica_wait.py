"""Durable before acting, through real processes: a primary and a replica (real redis-servers), a
router with ROUTER_REDIS_MIN_REPLICAS=1 posting to a fake Mastodon. A replica frozen (SIGSTOP, as
a stalled machine) cannot acknowledge: no post runs until its claim is on the replica; past the
timeout the command is answered not sent, and what it took is given back (sent again, it runs)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from protocol.commands import CommandEnvelope
from tests.router.router_helpers import OWNER_TURN, RouterProcess, reply_of, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.sentinel_redis import MemberServer

pytestmark = pytest.mark.slow
TOKEN = "replica-wait-masto-token"


@pytest.fixture
def pair():
    primary = MemberServer()
    primary.start()
    replica = MemberServer(primary, (f"replicaof 127.0.0.1 {primary.port}",))
    replica.start()
    admin = primary.admin_client()
    wait_until(lambda: admin.info("replication").get("connected_slaves") == 1
               and admin.info("replication")["slave0"]["state"] == "online", "the replica in sync")
    yield primary, replica, admin
    os.kill(replica.process.pid, signal.SIGCONT)
    admin.close()
    replica.cleanup()
    primary.cleanup()


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token=TOKEN).start()
    yield fake
    fake.stop()


def start_router(primary, mastodon, folder, timeout_ms):
    env = router_env(primary.router_url, folder, MASTODON_INSTANCE=mastodon.url, MASTODON_TOKEN=TOKEN,
                     ROUTER_QUOTAS="post=1000", ROUTER_REDIS_MIN_REPLICAS="1",
                     ROUTER_REDIS_REPLICA_TIMEOUT_MS=str(timeout_ms))
    return RouterProcess(env)


def post(admin, keys, text):
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "mastodon", "text": text}, "t", ttl_seconds=120,
                                   origin=OWNER_TURN)
    admin.lpush(keys.command_queue, envelope.to_json())
    return envelope


def posted(mastodon):
    return [status["text"] for status in mastodon.statuses.values()]


def beats(admin, key, count):
    for _ in range(count):
        last = json.loads(admin.get(key))["ts"]
        wait_until(lambda last=last: json.loads(admin.get(key) or "{}").get("ts", 0) > last, "a heartbeat", 30)


def test_a_frozen_replica_past_the_timeout_means_not_sent_and_what_it_took_given_back(pair, mastodon, tmp_path):
    primary, replica, admin = pair
    keys = primary.keys
    router = start_router(primary, mastodon, tmp_path, timeout_ms=500)
    try:
        first = post(admin, keys, "with the replica in sync")
        assert reply_of(admin, keys, first.id)["status"] == "ok"
        os.kill(replica.process.pid, signal.SIGSTOP)
        frozen = post(admin, keys, "while the replica is frozen")
        reply = reply_of(admin, keys, frozen.id)
        assert reply["status"] == "error" and reply["error"] == "not_durable", reply
        assert "was not sent" in reply["message"] and "ROUTER_REDIS_MIN_REPLICAS" in reply["message"]
        # after a split a promoted replica may still hold the queue item: the reply says so
        assert "may still hold the command and run it once" in reply["message"]
        assert posted(mastodon) == ["with the replica in sync"]
        assert not admin.exists(keys.idempotency(frozen.id))  # the claim given back
        os.kill(replica.process.pid, signal.SIGCONT)
        admin.lpush(keys.command_queue, frozen.to_json())  # the same command again: checked again, run
        assert reply_of(admin, keys, frozen.id)["status"] == "ok"
    finally:
        router.stop()
    assert posted(mastodon) == ["with the replica in sync", "while the replica is frozen"]


def test_no_post_runs_until_its_claim_is_on_the_replica(pair, mastodon, tmp_path):
    primary, replica, admin = pair
    keys = primary.keys
    router = start_router(primary, mastodon, tmp_path, timeout_ms=60_000)
    try:
        wait_until(lambda: admin.exists(keys.router_heartbeat("r1")), "the router")
        os.kill(replica.process.pid, signal.SIGSTOP)
        envelope = post(admin, keys, "once the claim is replicated")
        wait_until(lambda: admin.exists(keys.idempotency(envelope.id)), "the claim")
        beats(admin, keys.router_heartbeat("r1"), 2)  # time enough for a post that did not wait
        assert posted(mastodon) == [] and mastodon.posts() == []
        os.kill(replica.process.pid, signal.SIGCONT)
        assert reply_of(admin, keys, envelope.id)["status"] == "ok"
    finally:
        router.stop()
    assert posted(mastodon) == ["once the claim is replicated"]
