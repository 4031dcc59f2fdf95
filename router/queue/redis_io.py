"""How the router talks to Redis: a fail-fast bytes client and the conversions its values need.

Redis that answers but will not serve (out of memory, a read-only replica, loading, a failed
save, a replica whose master is down, …) is the same to the router as Redis that does not
answer: "unavailable", never a reason to stop. Its clients turn every error reply whose code
is not about the command itself into `RedisRefused`, a `redis.ConnectionError`, so each place
that waits out an outage waits this one out too, and a code Redis adds later is unavailable
by default rather than an item's fault.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from redis.cluster import RedisCluster

from protocol.redis_cluster import raise_moved, slot_client
from protocol.redis_link import no_retry, sync_client
from protocol.redis_safety import RedisUnsafe
from router.config.settings import RouterSettings

log = logging.getLogger("safeclaw.router.worker")
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)
MAX_BACKOFF_SECONDS = 5.0
# Error codes that describe the command sent (its syntax, a key's type, a right the login lacks,
# a login refused), not whether Redis serves: every other code is Redis refusing to serve.
COMMAND_ERRORS = frozenset(
    {"ERR", "WRONGTYPE", "NOPERM", "WRONGPASS", "NOAUTH", "NOSCRIPT", "EXECABORT", "NOGROUP",
     "BUSYGROUP", "NOPROTO", "MOVED", "ASK", "CROSSSLOT"}
)
# redis-py's own classes for some refusals (their message no longer carries the code).
REFUSAL_CLASSES = (
    (redis.exceptions.OutOfMemoryError, "OOM"),
    (redis.exceptions.ReadOnlyError, "READONLY"),
    (redis.exceptions.MasterDownError, "MASTERDOWN"),
    (redis.exceptions.TryAgainError, "TRYAGAIN"),
    (redis.exceptions.ClusterDownError, "CLUSTERDOWN"),
)
CAUSES = {
    "OOM": "out of memory",
    "READONLY": "a read-only replica",
    "LOADING": "loading its data",
    "MISCONF": "it cannot persist to disk",
    "MASTERDOWN": "a replica whose master is down",
    "UNBLOCKED": "it changed role under a blocking command",
    "PROTOCOL": "its answer was not Redis's protocol",
}


class RedisRefused(redis.ConnectionError):
    """Redis answered with a refusal to serve (`code`): unavailable until it serves again."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code} {message}")
        self.code = code

    @property
    def cause(self) -> str:
        return CAUSES.get(self.code, f"it refuses ({self.code})")


def refusal_code(exc: redis.ResponseError) -> str | None:
    """The code of an error reply that is Redis refusing to serve, None when it is about the command."""
    for cls, code in REFUSAL_CLASSES:
        if isinstance(exc, cls):
            return code
    if type(exc) is not redis.ResponseError:  # a class of its own: NOPERM, NOSCRIPT, a login, …
        return None
    code = getattr(exc, "status_code", None) or str(exc).split(" ", 1)[0]
    if code.isupper() and code.isalpha() and code not in COMMAND_ERRORS:
        return str(code)
    return None


class Refusals:
    """Mixed into a redis-py connection: an error reply that is a refusal is raised as `RedisRefused`."""

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)  # type: ignore[misc]
        except redis.exceptions.InvalidResponse as exc:  # not RESP: the stream, not the item, is bad
            raise RedisRefused("PROTOCOL", str(exc)) from exc
        except redis.ResponseError as exc:
            code = refusal_code(exc)
            if code is None:
                raise
            message = str(exc)
            message = message[len(code) + 1 :] if message.startswith(code) else message
            raise RedisRefused(code, message) from exc


def cause_of(exc: BaseException) -> str:
    """Why Redis is unavailable, in words for the log."""
    if isinstance(exc, RedisUnsafe):
        return f"it must not hold SafeClaw's keys: {exc.reason}"
    if isinstance(exc, RedisRefused):
        return f"{exc.cause}: {exc}"
    if isinstance(exc, redis.BusyLoadingError):
        return f"{CAUSES['LOADING']}: {exc}"
    return f"unreachable: {type(exc).__name__}: {exc}"


def connect(settings: RouterSettings) -> redis.Redis:
    """A client that fails fast (the worker does its own bounded backoff) and hands back bytes:
    a queue item that is not UTF-8 must reach the worker to be dead-lettered, not end the loop.
    Through `protocol.redis_link`: one server or Sentinel's primary, each connection checked."""
    return sync_client(
        settings.redis_url,
        decode_responses=False,
        socket_timeout=settings.block_seconds + 10,
        retry=no_retry(),
        mixins=(Refusals,),
        accepted_eviction=settings.redis_accept_eviction,
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
            log.warning("Redis unavailable (%s); retrying with backoff up to %.0fs", cause_of(exc),
                        MAX_BACKOFF_SECONDS)

    def ok(self, sent_at: float | None = None) -> None:
        """Redis answered. `sent_at` (monotonic): when the answered call was sent; one sent before
        the outage began (a blocking wait of another queue's loop) says nothing of now."""
        if self.down_since is None and not self.failures:
            return  # the usual case, once per command: no lock
        with self._lock:
            if sent_at is not None and self.down_since is not None and sent_at < self.down_since:
                return
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

    def llen(self, key: str) -> None:
        self.commands.append(("LLEN", key))

    def lmove(self, source: str, destination: str, src: str, dest: str) -> None:
        self.commands.append(("LMOVE", source, destination, src, dest))

    def blmove(self, source: str, destination: str, timeout: int, src: str, dest: str) -> None:
        self.commands.append(("BLMOVE", source, destination, src, dest, timeout))

    def send(self, conn: redis.Redis) -> list[Any]:
        """Every answer, in order; an error answer is raised once all are read (as a pipeline
        does); a connection that failed midway is closed, never reused."""
        if not self.commands:
            return []
        on_cluster = isinstance(conn, RedisCluster)
        # On a cluster: the node of the first command's key (a batch's keys share one slot).
        pool = slot_client(conn, self.commands[0][1]).connection_pool if on_cluster else conn.connection_pool
        connection = pool.get_connection()
        answers: list[Any] = []
        try:
            connection.send_packed_command([pack(self.commands)])
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
        if on_cluster:
            raise_moved(answers)
        for answer in answers:
            if isinstance(answer, redis.ResponseError):
                raise answer
        return answers


def pack(commands: list[tuple[Any, ...]]) -> bytes:
    """The commands in Redis's wire format (RESP), as redis-py packs them (bytes as they are, text
    as UTF-8, numbers by their repr) in a quarter of its time: one join, no per-argument calls."""
    out: list[bytes] = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            kind = type(arg)
            if kind is bytes:
                data = arg
            elif kind is str:
                data = arg.encode()
            elif kind is int or kind is float:
                data = repr(arg).encode()
            else:
                raise TypeError(f"a Redis argument of type {kind.__name__}")
            out.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(out)
