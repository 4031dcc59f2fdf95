"""Following the primary that Sentinel names: redis-py's Sentinel pools, telling the owner once.

redis-py's `SentinelConnectionPool` asks a Sentinel for the primary's address before each new
connection, and drops idle connections to an old one; a write the old primary refuses (READONLY)
closes its connection, so the next one goes to the new primary. These pools add one log line each
time the primary's address changes, and a blocking variant (a thread waits for a free connection
rather than opening more, as the agent's pool does).

A primary fenced by `min-replicas-to-write` answers writes NOREPLICAS while it stays a primary: cut
off from its replicas, it may already have been replaced, and a client that keeps its connection
would keep hearing "no" from it (redis-py follows READONLY, not this). `FollowFence` makes that answer
a `PrimaryFenced` connection error, so the client drops the connection and its next one asks
Sentinel where the primary is now.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
import redis.asyncio.sentinel as async_sentinel
from redis.sentinel import SentinelConnectionPool, SentinelConnectionPoolProxy

log = logging.getLogger("safeclaw.redis")


class PrimaryFenced(redis.ConnectionError):
    """The primary refused a write for want of replicas (NOREPLICAS): reconnect through Sentinel.
    The write was not run."""


class FollowFence:
    """Mixed into a Sentinel-managed connection: NOREPLICAS raised as `PrimaryFenced`."""

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)  # type: ignore[misc]
        except redis.ResponseError as exc:
            raise _fenced(exc) from exc


class AsyncFollowFence:
    """`FollowFence` for a `redis.asyncio` connection (the MCP server's)."""

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)  # type: ignore[misc]
        except redis.ResponseError as exc:
            raise _fenced(exc) from exc


def _fenced(exc: redis.ResponseError) -> redis.ResponseError | PrimaryFenced:
    """A NOREPLICAS refusal as `PrimaryFenced`; any other refusal as it was."""
    if not str(exc).startswith("NOREPLICAS"):
        return exc
    return PrimaryFenced(f"the primary refuses writes for want of replicas ({exc}); it may have "
                         "been replaced: reconnecting through Sentinel")


class PrimaryWatch:
    """The primary's last address, and the one line said when it changes."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.address: tuple[str, int] | None = None
        self._lock = threading.Lock()

    def saw(self, address: Any) -> None:
        current = (str(address[0]), int(address[1]))
        with self._lock:
            before, self.address = self.address, current
        if before is None:
            log.info("Redis primary %r is at %s:%d (from Sentinel)", self.service, *current)
        elif before != current:
            log.warning("Redis primary %r changed from %s:%d to %s:%d (a Sentinel failover): "
                        "reconnecting to the new primary", self.service, *before, *current)


class _WatchedProxy(SentinelConnectionPoolProxy):
    """What the pool's connections ask for the primary's address (redis-py's proxy), watched."""

    watch: PrimaryWatch

    def get_master_address(self) -> Any:
        address = super().get_master_address()
        self.watch.saw(address)
        return address


class FollowingSentinelPool(SentinelConnectionPool):
    """redis-py's Sentinel pool for the primary, with one log line when its address changes."""

    def __init__(self, service_name: str, sentinel_manager: Any, **kwargs: Any) -> None:
        super().__init__(service_name, sentinel_manager, **kwargs)
        proxy = _WatchedProxy(self, self.is_master, self.check_connection, service_name, sentinel_manager)
        proxy.watch = PrimaryWatch(service_name)
        self.proxy = proxy
        self.connection_kwargs["connection_pool"] = proxy


class BlockingSentinelPool(FollowingSentinelPool, redis.BlockingConnectionPool):
    """The same, holding at most `max_connections`: a thread waits `timeout` for a free one."""


class AsyncFollowingSentinelPool(async_sentinel.SentinelConnectionPool):
    """redis.asyncio's Sentinel pool (the MCP server's), with the same log line."""

    def __init__(self, service_name: str, sentinel_manager: Any, **kwargs: Any) -> None:
        super().__init__(service_name, sentinel_manager, **kwargs)
        self.watch = PrimaryWatch(service_name)

    async def get_master_address(self) -> Any:
        address = await super().get_master_address()
        self.watch.saw(address)
        return address
