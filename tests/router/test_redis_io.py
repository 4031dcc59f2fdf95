"""The router's raw round trip (`router.redis_io.Batch`) against a real redis-server and its ACL."""

import pytest
import redis

from router.redis_io import Batch


@pytest.fixture
def router_conn(redis_urls):
    conn = redis.Redis.from_url(redis_urls.router_url)
    yield conn
    conn.close()


def test_a_batch_runs_every_command_in_order_and_returns_the_answers(redis_urls, router_conn, admin):
    keys = redis_urls.keys
    processing, queue = keys.processing("r1"), keys.command_queue
    admin.lpush(queue, "first", "second")
    batch = Batch()
    batch.lpush(processing, b"\xff not utf-8")
    batch.lrem(processing, 1, b"\xff not utf-8")
    batch.lmove(queue, processing, "RIGHT", "LEFT")
    batch.lmove(queue, processing, "RIGHT", "LEFT")
    batch.blmove(queue, processing, 1, "RIGHT", "LEFT")  # nothing left: waits, then None
    assert batch.send(router_conn) == [1, 1, b"first", b"second", None]
    assert router_conn.lrange(processing, 0, -1) == [b"second", b"first"]


def test_an_error_answer_is_raised_after_every_command_ran_and_the_connection_lives_on(redis_urls,
                                                                                         router_conn):
    processing = redis_urls.keys.processing("r1")
    batch = Batch()
    batch.lpush(processing, b"x")
    batch.lpush("outside:the:router:keys", b"y")  # refused: not one of the router user's keys
    batch.lrem(processing, 1, b"x")
    with pytest.raises(redis.ResponseError, match="no permissions"):
        batch.send(router_conn)
    assert router_conn.llen(processing) == 0  # the command after the error ran too
    assert router_conn.ping()

