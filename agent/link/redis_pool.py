"""The agent's one Redis pool. An entry point builds it once (`agent.app.build_redis`; the `status`
and `doctor` commands through the same function) and every part that talks to Redis gets a client on
it: the router client, the approval desk, autonomy, the cost summary and the heartbeat.

One set of timeouts for the process: a reply slower than `SOCKET_TIMEOUT` is a failure, so a blocking
read asks Redis to wait at most `BLOCK_SLICE` at a time. No command is retried by the client (a
resent LPUSH could send a command twice); each caller decides what a failure means. The pool holds at
most `MAX_CONNECTIONS`, and a thread waits for a free one rather than opening more.
"""

from __future__ import annotations

import redis
from redis.sentinel import Sentinel

from agent.config.settings import AgentSettings
from agent.errors import ConfigError
from protocol.redis_address import AddressError, RedisAddress, parse_address
from protocol.redis_cluster import untagged_on_cluster
from protocol.redis_link import RedisUnsafe, check_now, no_retry, sync_client

CONNECT_TIMEOUT = 3.0
SOCKET_TIMEOUT = 5.0
BLOCK_SLICE = SOCKET_TIMEOUT - 2.0  # seconds one BLPOP may wait, well inside the socket timeout
MAX_CONNECTIONS = 8


def redis_client(url: str, accepted_eviction: str = "") -> redis.Redis:
    """A client on a new pool for `url` (the agent's user, in the URL; one server or Sentinel's
    primary, every connection checked by `protocol.redis_link`): one per process."""
    return sync_client(
        url,
        decode_responses=True,
        max_connections=MAX_CONNECTIONS,
        wait_for_connection=SOCKET_TIMEOUT,  # the longest a thread waits for a free connection
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=SOCKET_TIMEOUT,
        retry=no_retry(),
        accepted_eviction=accepted_eviction,
    )


def build_redis(settings: AgentSettings) -> redis.Redis | None:
    """The process's client on its one pool, or None when REDIS_URL is not set."""
    if not settings.redis_url:
        return None
    try:
        refusal = untagged_on_cluster(parse_address(settings.redis_url), settings.keys)
        if refusal:
            raise ConfigError(refusal)
        return redis_client(settings.redis_url, settings.redis_accept_eviction)
    except AddressError as exc:
        raise ConfigError(str(exc)) from None


def refuse_unsafe(conn: redis.Redis | None) -> None:
    """Stop the agent, saying why and how to fix it, when its Redis may drop keys or is a replica;
    a Redis that does not answer yet is waited out as before (each command says so)."""
    if conn is None:
        return
    try:
        check_now(conn)
    except RedisUnsafe as exc:
        conn.close()
        raise ConfigError(f"the agent will not use this Redis: {exc.reason}") from None
    except (redis.ConnectionError, redis.TimeoutError):
        pass


def anonymous_client(url: str) -> redis.Redis:
    """A client for the same server with no login, only for `doctor` to see that the default user is
    off (closed after that one check). Behind Sentinel: the primary it names now."""
    address = parse_address(url)
    if address.is_sentinel:
        host, port = primary_address(address)
    elif address.is_cluster:
        host, port = address.cluster_nodes[0]
    else:
        host, port = address.options.get("host") or "127.0.0.1", address.options.get("port") or 6379
    return redis.Redis(host=host, port=port, socket_connect_timeout=CONNECT_TIMEOUT,
                       socket_timeout=SOCKET_TIMEOUT)


def primary_address(address: RedisAddress) -> tuple[str, int]:
    sentinel = Sentinel(list(address.sentinels), socket_connect_timeout=CONNECT_TIMEOUT,
                        socket_timeout=SOCKET_TIMEOUT)
    try:
        host, port = sentinel.discover_master(address.service)
    finally:
        sentinel.close()
    return str(host), int(port)
