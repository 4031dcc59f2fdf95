"""The one way every SafeClaw process connects to Redis (router, agent, dashboard, MCP server,
`status`/`doctor`, the control commands): a REDIS_URL read by `protocol.redis_address` (one server, or
the primary Sentinel names, followed through a failover by `protocol.redis_sentinel`, or a Redis
Cluster through redis-py's `RedisCluster`), and
connections that each check, right after their login, that this Redis is the primary and keeps
every key (`protocol.redis_safety`): at start, on every reconnect, after every failover.

A caller gives its timeouts, its decoding, its own connection behaviour (`mixins`, e.g. the router's
refusals as "unavailable"), and the one eviction policy its owner accepted (REDIS_ACCEPT_EVICTION).
"""

from __future__ import annotations

import functools
from typing import Any

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as async_cluster
import redis.asyncio.connection as async_connection
import redis.asyncio.sentinel as async_sentinel
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelManagedConnection, SentinelManagedSSLConnection

from protocol.redis_address import RedisAddress, parse_address
from protocol.redis_cluster import TaggedCluster
from protocol.redis_safety import CheckedAsyncConnection, CheckedConnection, RedisUnsafe
from protocol.redis_sentinel import (
    AsyncFollowFence,
    AsyncFollowingSentinelPool,
    BlockingSentinelPool,
    FollowFence,
    FollowingSentinelPool,
)

__all__ = ["RedisUnsafe", "async_client", "check_now", "no_retry", "parse_address", "sync_client"]

SSL_OPTIONS = ("ssl_keyfile", "ssl_certfile", "ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path",
               "ssl_ca_data", "ssl_check_hostname", "ssl_password", "ssl_min_version", "ssl_ciphers")


def no_retry() -> Retry:
    """No command resent by the client: a resent LPUSH could send a command twice."""
    return Retry(NoBackoff(), 0)


def no_retry_async() -> AsyncRetry:
    return AsyncRetry(NoBackoff(), 0)


def _base_class(address: RedisAddress) -> type:
    if address.is_sentinel:
        return SentinelManagedSSLConnection if address.tls else SentinelManagedConnection
    if address.is_cluster:
        return redis.SSLConnection if address.tls else redis.Connection
    scheme = address.url.split("://", 1)[0].lower()
    classes = {"rediss": redis.SSLConnection, "unix": redis.UnixDomainSocketConnection}
    return classes.get(scheme, redis.Connection)


def _async_base_class(address: RedisAddress) -> type:
    if address.is_sentinel:
        if address.tls:
            return async_sentinel.SentinelManagedSSLConnection
        return async_sentinel.SentinelManagedConnection
    if address.is_cluster:
        return async_connection.SSLConnection if address.tls else async_connection.Connection
    scheme = address.url.split("://", 1)[0].lower()
    return {"rediss": async_connection.SSLConnection,
            "unix": async_connection.UnixDomainSocketConnection}.get(scheme, async_connection.Connection)


@functools.lru_cache(maxsize=64)
def checked_class(base: type, mixins: tuple[type, ...], accepted_eviction: str, checked: type) -> type:
    """`base` with the caller's mixins and the safety check, one class per combination."""
    name = "Checked" + "".join(cls.__name__ for cls in (*mixins, base))
    return type(name, (*mixins, checked, base), {"accepted_eviction": accepted_eviction})


def _sentinel_options(address: RedisAddress, common: dict[str, Any]) -> dict[str, Any]:
    """How the Sentinels themselves are reached: the same timeouts and TLS, their own login."""
    options = {name: value for name, value in common.items() if name.startswith("socket_")}
    if address.tls:
        options["ssl"] = True
        options.update({name: address.options[name] for name in SSL_OPTIONS if name in address.options})
    login = address.sentinel_login
    if login.get("sentinel_password"):
        options["password"] = login["sentinel_password"]
        if login.get("sentinel_username"):
            options["username"] = login["sentinel_username"]
    return options


def sync_client(
    url: str, *, decode_responses: bool, socket_timeout: float, socket_connect_timeout: float = 3.0,
    max_connections: int | None = None, wait_for_connection: float | None = None,
    mixins: tuple[type, ...] = (), accepted_eviction: str = "", **extra: Any,
) -> redis.Redis:
    """A client on a new pool of its own for `url`. `wait_for_connection`: a blocking pool of
    `max_connections` (a thread waits this long for a free one) instead of one that opens more."""
    address = parse_address(url)
    if address.is_sentinel:  # a fenced primary's NOREPLICAS: reconnect, through Sentinel
        mixins = (*mixins, FollowFence)
    cls = checked_class(_base_class(address), mixins, accepted_eviction, CheckedConnection)
    common: dict[str, Any] = {"decode_responses": decode_responses, "socket_timeout": socket_timeout,
                              "socket_connect_timeout": socket_connect_timeout, **extra}
    if max_connections is not None:
        common["max_connections"] = max_connections
    if wait_for_connection is not None:
        common["timeout"] = wait_for_connection
    if address.is_cluster:
        return _cluster_client(address, cls, common)  # type: ignore[return-value]
    if address.is_sentinel:
        sentinel = Sentinel(list(address.sentinels), sentinel_kwargs=_sentinel_options(address, common))
        pool_cls = BlockingSentinelPool if wait_for_connection is not None else FollowingSentinelPool
        options = {**address.options, **common}
        options.pop("ssl", None)
        pool: redis.ConnectionPool = pool_cls(address.service, sentinel, connection_class=cls, **options)
    else:
        plain_cls = redis.BlockingConnectionPool if wait_for_connection is not None else redis.ConnectionPool
        pool = plain_cls.from_url(url, connection_class=cls, **common)
    return redis.Redis(connection_pool=pool)


def _cluster_client(address: RedisAddress, cls: type, common: dict[str, Any]) -> TaggedCluster:
    """A cluster client: one checked pool per node. Its own retries are off like every client's
    (a MOVED or ASK redirect is still followed: Redis ran nothing on the node that sent it)."""
    options = {**address.options, **common}
    options.pop("ssl", None)
    # RedisCluster builds plain pools per node: a bound on them would fail a thread, not make it wait.
    options.pop("timeout", None)
    options.pop("max_connections", None)
    options.setdefault("retry", no_retry())  # RedisCluster resends on a lost connection otherwise
    (host, port), *others = address.cluster_nodes
    nodes = [ClusterNode(other_host, other_port) for other_host, other_port in others]
    # Given a `url`, RedisCluster builds each node's pool from these options, so every node's
    # connections are of our checked class (without one it passes them to Redis(), which refuses).
    return TaggedCluster(url=f"redis://{host}:{port}", startup_nodes=nodes, connection_class=cls, **options)


def _async_cluster_client(address: RedisAddress, cls: type,
                          common: dict[str, Any]) -> async_cluster.RedisCluster:
    """redis.asyncio's cluster client, its nodes' connections of our checked class. It takes no
    connection class, so ours is set where it builds each node from, before any connection opens
    (its nodes connect on the first command)."""
    options = {**address.options, **common}
    options.pop("ssl", None)
    nodes = [async_cluster.ClusterNode(host, port) for host, port in address.cluster_nodes]
    client = async_cluster.RedisCluster(startup_nodes=nodes, ssl=address.tls, retry=no_retry_async(),
                                        **options)
    client.connection_kwargs["connection_class"] = cls
    client.nodes_manager.connection_kwargs["connection_class"] = cls
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = cls
    return client


@functools.lru_cache(maxsize=8)
def _async_sentinel(url: str) -> async_sentinel.Sentinel:
    """One set of Sentinel clients per URL for the process (an MCP server opens a client per call)."""
    address = parse_address(url)
    options = _sentinel_options(address, {"socket_connect_timeout": 3.0, "socket_timeout": 5.0})
    return async_sentinel.Sentinel(list(address.sentinels), sentinel_kwargs=options)


def async_client(url: str, *, decode_responses: bool, socket_connect_timeout: float = 3.0,
                 accepted_eviction: str = "", **extra: Any) -> aioredis.Redis:
    """A `redis.asyncio` client on one connection of its own (closed with it), checked the same way."""
    address = parse_address(url)
    mixins: tuple[type, ...] = (AsyncFollowFence,) if address.is_sentinel else ()
    cls = checked_class(_async_base_class(address), mixins, accepted_eviction, CheckedAsyncConnection)
    common: dict[str, Any] = {"decode_responses": decode_responses,
                              "socket_connect_timeout": socket_connect_timeout, **extra}
    if address.is_cluster:
        return _async_cluster_client(address, cls, common)  # type: ignore[return-value]
    if not address.is_sentinel:
        return aioredis.Redis.from_url(url, connection_class=cls, single_connection_client=True, **common)
    options = {**address.options, **common}
    options.pop("ssl", None)
    pool = AsyncFollowingSentinelPool(address.service, _async_sentinel(url), connection_class=cls, **options)
    return aioredis.Redis(connection_pool=pool, single_connection_client=True,
                          auto_close_connection_pool=True)


def check_now(conn: redis.Redis) -> None:
    """Open (or reuse) a connection now, so a Redis that must not be used raises `RedisUnsafe` at
    an entry point's start rather than at its first command. Redis unreachable raises as usual."""
    conn.ping()
