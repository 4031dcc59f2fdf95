"""How the router talks to Redis: a fail-fast bytes client and the conversions its values need."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from router.config.settings import RouterSettings

log = logging.getLogger("safeclaw.router.worker")
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)
MAX_BACKOFF_SECONDS = 5.0


def connect(settings: RouterSettings) -> redis.Redis:
    """A client that fails fast (the worker does its own bounded backoff) and hands back bytes:
    a queue item that is not UTF-8 must reach the worker to be dead-lettered, not end the loop."""
    return redis.Redis.from_url(
        settings.redis_url,
        decode_responses=False,
        socket_connect_timeout=3,
        socket_timeout=settings.block_seconds + 10,
        retry=Retry(NoBackoff(), 0),
    )


def as_bytes(value: bytes | str) -> bytes:
    """What the bytes client returns, typed as such (redis-py's stubs say str | bytes)."""
    return value if isinstance(value, bytes) else value.encode("utf-8", "replace")


def utf8(text: str) -> bytes:
    """Text as Redis stores it; a lone surrogate (JSON allows "\\udc00") becomes '?' instead of
    an encoding error that would end the router."""
    return text.encode("utf-8", "replace")


class RedisHealth:
    """Whether Redis answers: one log line when it goes and one when it comes back (then
    `on_back`), and the bounded backoff between tries (shared by the loop and the lanes)."""

    def __init__(self, on_back: Callable[[], None]) -> None:
        self.failures = 0
        self.down_since: float | None = None
        self.on_back = on_back
        self._lock = threading.Lock()  # the loop and the lanes report from their own threads

    def lost(self, exc: Exception) -> None:
        with self._lock:
            self.failures += 1
            if self.down_since is not None:
                return
            self.down_since = time.monotonic()
            log.warning(
                "Redis unreachable (%s: %s); retrying with backoff up to %.0fs",
                type(exc).__name__,
                exc,
                MAX_BACKOFF_SECONDS,
            )

    def ok(self) -> None:
        if self.down_since is None and not self.failures:
            return  # the usual case, once per command: no lock
        with self._lock:
            since, self.down_since, self.failures = self.down_since, None, 0
        if since is not None:
            log.info("Redis reachable again after %.1fs", time.monotonic() - since)
            self.on_back()

    def backoff_seconds(self) -> float:
        return min(MAX_BACKOFF_SECONDS, 0.1 * 2 ** min(self.failures, 6))


class Batch:
    """Commands for one round trip, sent in order without MULTI: the few a router's result needs,
    with a pipeline's method names. Cheaper than redis-py's pipeline on the hot path (a PING's
    reply): no per-command bookkeeping or response callbacks, the answers as Redis gives them."""

    def __init__(self) -> None:
        self.commands: list[tuple[Any, ...]] = []

    def xadd(self, stream: str, fields: dict[str, Any], maxlen: int, approximate: bool = True) -> None:
        pairs = [part for item in fields.items() for part in item]
        self.commands.append(("XADD", stream, "MAXLEN", "~" if approximate else "=", maxlen, "*", *pairs))

    def set(self, key: str, value: Any, ex: int) -> None:
        self.commands.append(("SET", key, value, "EX", ex))

    def lpush(self, key: str, value: Any) -> None:
        self.commands.append(("LPUSH", key, value))

    def ltrim(self, key: str, start: int, end: int) -> None:
        self.commands.append(("LTRIM", key, start, end))

    def expire(self, key: str, seconds: int) -> None:
        self.commands.append(("EXPIRE", key, seconds))

    def delete(self, key: str) -> None:
        self.commands.append(("DEL", key))

    def lrem(self, key: str, count: int, value: Any) -> None:
        self.commands.append(("LREM", key, count, value))

    def lmove(self, source: str, destination: str, src: str, dest: str) -> None:
        self.commands.append(("LMOVE", source, destination, src, dest))

    def blmove(self, source: str, destination: str, timeout: int, src: str, dest: str) -> None:
        self.commands.append(("BLMOVE", source, destination, src, dest, timeout))

    def send(self, conn: redis.Redis) -> list[Any]:
        """Every answer, in order; an error answer is raised once all are read (as a pipeline
        does); a connection that failed midway is closed, never reused."""
        pool = conn.connection_pool
        connection = pool.get_connection()
        answers: list[Any] = []
        try:
            connection.send_packed_command(connection.pack_commands(self.commands))
            for _ in self.commands:
                try:
                    answers.append(connection.read_response())
                except redis.ResponseError as exc:
                    answers.append(exc)
        except BaseException:
            connection.disconnect()
            raise
        finally:
            pool.release(connection)
        for answer in answers:
            if isinstance(answer, redis.ResponseError):
                raise answer
        return answers
