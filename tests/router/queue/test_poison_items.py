"""No single queue item can stop a router: undecodable bytes, on the queue or left in a dead
router's processing list, are dead-lettered with their reason and the loop goes on."""

import json

import pytest
import redis

from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for, wait_until

POISON = [b"\xff", b"\xff\xfe" * 1000, b'{"id": "a\xff", "action": "PING"}', b"\xc3\x28", b"\x00"]


@pytest.fixture
def agent(redis_urls):
    client = redis.Redis.from_url(redis_urls.agent_url)
    yield client
    client.close()


def dead_letters(admin, keys):
    return [json.loads(entry) for entry in admin.lrange(keys.dead_letter, 0, -1)]


@pytest.mark.parametrize("item", POISON)
def test_an_undecodable_item_pushed_by_the_agent_is_dead_lettered_and_the_router_goes_on(
        redis_urls, admin, agent, tmp_path, item):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        agent.lpush(keys.command_queue, item)
        reply = reply_of(admin, keys, push(admin, keys, "PING", {}))
        assert reply["status"] == "ok"
        assert admin.llen(keys.processing("r1")) == 0
    [entry] = dead_letters(admin, keys)
    assert entry["reason"].startswith("malformed command")


@pytest.mark.parametrize("item", POISON)
def test_a_poison_item_in_a_dead_routers_list_does_not_stop_the_router_taking_it_over(
        redis_urls, admin, tmp_path, item):
    keys = redis_urls.keys
    admin.lpush(keys.processing("gone"), item)  # router "gone" died holding it; no heartbeat
    admin.lpush(keys.processing("r1"), item)  # and this router died holding one too
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        wait_until(lambda: len(dead_letters(admin, keys)) == 2, "both items dead-lettered")
        reply = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert reply["status"] == "ok"
    assert admin.llen(keys.processing("gone")) == 0 and admin.llen(keys.processing("r1")) == 0
