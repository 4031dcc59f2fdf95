"""The agent's one Redis pool. An entry point builds it once (`agent.app.build_redis`; the `status`
and `doctor` commands through the same function) and every part that talks to Redis gets a client on
it: the router client, the approval desk, autonomy, the cost summary and the heartbeat.

One set of timeouts for the process: a reply slower than `SOCKET_TIMEOUT` is a failure, so a blocking
read asks Redis to wait at most `BLOCK_SLICE` at a time. No command is retried by the client (a
resent LPUSH could send a command twice); each caller decides what a failure means. The pool holds at
most `MAX_CONNECTIONS`, and a thread waits for a free one rather than opening more.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from agent.config.settings import AgentSettings

CONNECT_TIMEOUT = 3.0
SOCKET_TIMEOUT = 5.0
BLOCK_SLICE = SOCKET_TIMEOUT - 2.0  # seconds one BLPOP may wait, well inside the socket timeout
MAX_CONNECTIONS = 8


def redis_client(url: str) -> redis.Redis:
    """A client on a new pool for `url` (the agent's user, in the URL): one per process."""
    pool = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=SOCKET_TIMEOUT,  # the longest a thread waits for a free connection
        decode_responses=True,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=SOCKET_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )
    return redis.Redis(connection_pool=pool)


def build_redis(settings: AgentSettings) -> redis.Redis | None:
    """The process's client on its one pool, or None when REDIS_URL is not set."""
    return redis_client(settings.redis_url) if settings.redis_url else None


def anonymous_client(url: str) -> redis.Redis:
    """A client for the same server with no login, only for `doctor` to see that the default user is
    off (closed after that one check)."""
    parts = urlsplit(url)
    return redis.Redis(host=parts.hostname or "127.0.0.1", port=parts.port or 6379,
                       socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=SOCKET_TIMEOUT)
