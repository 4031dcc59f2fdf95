"""A replicated Redis on loopback as users run one: a primary, a replica and Sentinel (the same
`redis-server` binary, `--sentinel`), every server with SafeClaw's generated ACL users and the same
passwords, so a login works on whichever one is the primary.

`url(user)` gives the `redis+sentinel://` URL every SafeClaw process takes; `primary_port()` asks
Sentinel which server is the primary. `primary_behind_proxy`: everyone (Sentinel, the replicas, and
so every SafeClaw process, which goes where Sentinel says) reaches the first primary only through a
`TcpProxy` that a test can cut, a partition of the primary from all the others. `fenced`: every server
refuses writes with no replica acknowledging for `FENCE_LAG_SECONDS` (`min-replicas-to-write 1`), as
the shipped compose profile can be told to.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import redis

from router.config.replication_acl import REPLICA_USER, SENTINEL_USER, replication_lines
from tests.support.redis_server import REDIS_SERVER_BINARY, RedisServer, free_port
from tests.support.tcp_proxy import TcpProxy

SERVICE = "safeclaw"
FENCE_LAG_SECONDS = 2
PASSWORDS = ("agent_password", "router_password", "admin_password", "control_password", "mcp_password",
             "replica_password", "sentinel_password")


class MemberServer(RedisServer):
    """One server of the set: the first one's passwords, the shipped replica and Sentinel users
    (`router.config.replication_acl`, replication as `replica`), and `extra` lines (`replicaof`)."""

    def __init__(self, like: RedisServer | None = None, extra: tuple[str, ...] = ()) -> None:
        self.extra = list(extra)
        self.like = like
        self.replica_password = secrets.token_urlsafe(18)
        self.sentinel_password = secrets.token_urlsafe(18)
        super().__init__(like.keys if like else None, persistent=True)
        if like is not None:
            for name in PASSWORDS:
                setattr(self, name, getattr(like, name))
            self._write_config()

    def _write_config(self) -> None:
        super()._write_config()
        with open(self.dir / "users.acl", "a", encoding="utf-8") as acl:
            acl.write(replication_lines(self.replica_password, self.sentinel_password))
        lines = [f"masteruser {REPLICA_USER}", f"masterauth {self.replica_password}", *self.extra]
        with open(self.dir / "redis.conf", "a", encoding="utf-8") as conf:
            conf.write("\n".join(lines) + "\n")


class SentinelProcess:
    """`redis-server sentinel.conf --sentinel` watching `primary` under the name `SERVICE`."""

    def __init__(self, primary: MemberServer, down_after_ms: int = 1000, port: int | None = None) -> None:
        """`port`: where Sentinel reaches the primary (a proxy's), else the primary's own."""
        self.dir = Path(tempfile.mkdtemp(prefix="safeclaw-sentinel-"))
        self.port = free_port()
        lines = [
            f"port {self.port}", "bind 127.0.0.1", f"dir {self.dir}", "logfile sentinel.log", "daemonize no",
            f"sentinel monitor {SERVICE} 127.0.0.1 {port or primary.port} 1",
            f"sentinel auth-user {SERVICE} {SENTINEL_USER}",
            f"sentinel auth-pass {SERVICE} {primary.sentinel_password}",
            f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}",
            f"sentinel failover-timeout {SERVICE} 5000",
        ]
        (self.dir / "sentinel.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.process = subprocess.Popen(
            [REDIS_SERVER_BINARY, str(self.dir / "sentinel.conf"), "--sentinel"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir,
        )

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, decode_responses=True, socket_timeout=5)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        shutil.rmtree(self.dir, ignore_errors=True)


class ReplicatedRedis:
    def __init__(self, replicas: int = 1, primary_behind_proxy: bool = False, fenced: bool = False) -> None:
        fence = ("min-replicas-to-write 1", f"min-replicas-max-lag {FENCE_LAG_SECONDS}") if fenced else ()
        self.primary = MemberServer(extra=fence)
        self.primary.start()
        self.proxy = TcpProxy(self.primary.port) if primary_behind_proxy else None
        reach = self.proxy.listen_port if self.proxy else self.primary.port
        self.replicas = [MemberServer(self.primary, (f"replicaof 127.0.0.1 {reach}", *fence))
                         for _ in range(replicas)]
        for replica in self.replicas:
            replica.start()
        self.replica = self.replicas[0]
        self.servers = [self.primary, *self.replicas]
        self.sentinel = SentinelProcess(self.primary, port=reach)

    def url(self, user: str) -> str:
        password = getattr(self.primary, f"{user}_password")
        return f"redis+sentinel://{user}:{password}@127.0.0.1:{self.sentinel.port}/{SERVICE}/0"

    def primary_port(self) -> int | None:
        """The primary's port as Sentinel names it now (None while it cannot say)."""
        client = self.sentinel.client()
        try:
            answer: Any = client.sentinel_get_master_addr_by_name(SERVICE)
        except redis.RedisError:
            return None
        finally:
            client.close()
        return int(answer[1]) if answer else None

    def server_at(self, port: int) -> MemberServer:
        return next(server for server in self.servers if server.port == port)

    def replica_in_sync(self) -> bool:
        """The replica has caught up with the primary and Sentinel knows it (failover can pick it)."""
        return self.replicas_in_sync(1)

    def replicas_in_sync(self, count: int) -> bool:
        """At least `count` replicas caught up with the primary, as Sentinel knows them."""
        client = self.sentinel.client()
        try:
            replicas = client.sentinel_slaves(SERVICE)
        except redis.RedisError:
            return False
        finally:
            client.close()
        synced = [r for r in replicas if not r["is_sdown"] and r.get("master-link-status") == "ok"]
        return len(synced) >= count

    def cleanup(self) -> None:
        self.sentinel.stop()
        if self.proxy is not None:
            self.proxy.stop()
        for server in self.servers:
            server.cleanup()
