"""The router's raw round trip (`router.queue.redis_io.Batch`) against a real redis-server and its ACL,
and its Redis health tracker shared by the loop and the lanes."""

import logging
import threading
import time

import pytest
import redis
from redis.connection import Connection

from router.queue.redis_io import Batch, RedisHealth, pack


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



class SlowHandler(logging.Handler):
    """A log handler as slow as a full disk, so threads reporting together overlap."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        time.sleep(0.05)
        self.lines.append(record.getMessage())


def test_one_outage_is_one_line_and_one_comeback_however_many_threads_report_it():
    backs: list[int] = []
    health = RedisHealth(on_back=lambda: backs.append(1))
    handler = SlowHandler()
    logger = logging.getLogger("safeclaw.router.worker")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)  # not `logger.level =`: that keeps a cached 'INFO is off'
    try:
        for report in (lambda: health.lost(ConnectionError("gone")), health.ok):
            start = threading.Barrier(6)
            threads = [threading.Thread(target=lambda r=report, b=start: (b.wait(), r())) for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert [line.split(" (")[0].split(" after")[0] for line in handler.lines] == [
        "Redis unavailable",
        "Redis reachable again",
    ]
    assert backs == [1]


@pytest.mark.parametrize("command", [
    ("LPUSH", "safeclaw:response:c1", b'{"id":"c1"}'),
    ("XADD", "safeclaw:audit", "MAXLEN", "~", 10_000, "*", "line", '{"text":"né 漢字 🦀 \r\n"}'),
    ("SET", "k", b"\xff\r\n$3\r\n not utf-8", "EX", 3600),
    ("EXPIRE", "k", -1), ("LREM", "k", 0, b""), ("BLMOVE", "a", "b", "RIGHT", "LEFT", 1), ("ZADD", "z", 1.5, "m"),
])
def test_a_batch_is_packed_byte_for_byte_as_redis_py_packs_it(command):
    assert pack([command, command]) == b"".join(Connection().pack_commands([command, command]))


@pytest.mark.parametrize("odd", [True, None, 1j, ["a list"]])
def test_an_argument_redis_py_would_refuse_is_refused(odd):
    with pytest.raises(TypeError):
        pack([("SET", "k", odd)])
