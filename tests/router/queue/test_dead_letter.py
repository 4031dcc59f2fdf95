"""The dead-letter list is capped and aged out, and its size is in every router heartbeat."""

import json
import time

import redis

from router.queue.dead_letter import DeadLetters
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for, wait_until


def test_a_poison_stream_never_grows_the_list_past_its_cap(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_DEAD_LETTER_MAX="10")):
        for i in range(40):
            admin.lpush(keys.command_queue, f"not json {i}")
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
    entries = [json.loads(e) for e in admin.lrange(keys.dead_letter, 0, -1)]
    assert len(entries) == 10 and entries[0]["command"] == "not json 39"  # the newest kept
    assert 0 < admin.ttl(keys.dead_letter) <= 7 * 24 * 3600


def test_old_entries_age_out_oldest_first(redis_urls):
    keys = redis_urls.keys
    admin = redis.Redis.from_url(redis_urls.server.admin_url)  # bytes, as the router reads
    letters = DeadLetters(keys.dead_letter, max_entries=100, ttl=3600)
    now = time.time()
    for ts in (now - 7200, now - 5000, now - 10):  # pushed oldest first: newest is at the head
        admin.lpush(keys.dead_letter, json.dumps({"ts": ts, "reason": "r"}))
    admin.rpush(keys.dead_letter, b"\xff not an entry")  # unreadable: counts as old
    assert letters.age_out(admin, now) == 3
    assert [json.loads(e)["ts"] for e in admin.lrange(keys.dead_letter, 0, -1)] == [now - 10]
    admin.close()


def test_the_heartbeat_and_status_show_the_dead_letter_size(redis_urls, admin, tmp_path):
    from agent.status.stack import router_lines

    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        for _ in range(3):
            admin.lpush(keys.command_queue, "garbage")
        wait_until(lambda: admin.llen(keys.dead_letter) == 3, "three dead letters")
        beat = wait_until(lambda: (b := admin.get(keys.router_heartbeat("r1"))) and json.loads(b)["dead_letter"] == 3
                          and json.loads(b), "a heartbeat with the size", deadline_seconds=10)
        [line] = router_lines(admin, keys)
    assert beat["dead_letter"] == 3
    assert "3 command(s) could not run and are set aside" in line.line()
