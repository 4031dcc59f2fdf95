"""A real redis-server for tests: free loopback port, tmp dir, SafeClaw's generated ACL users.

`RedisServer` starts `/usr/bin/redis-server` with AOF on (`appendfsync always`) so a restart keeps
every acknowledged write; `restart()` reuses the port, the passwords and the data.
Fixtures: `redis_server` (one per session, so one per xdist worker) and `redis_urls` (each test
starts with no data and no connection left by an earlier test; flushed after it too).
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from protocol.keys import Keys
from router.config.redis_acl import render_acl

REDIS_SERVER_BINARY = "/usr/bin/redis-server"
PORT_TRIES = 5


class PortTaken(RuntimeError):
    """redis-server could not listen: its port was taken between choosing it and binding it."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    def __init__(self, keys: Keys | None = None, persistent: bool = True) -> None:
        self.keys = keys or Keys()
        self.persistent = persistent
        self.dir = Path(tempfile.mkdtemp(prefix="safeclaw-redis-"))
        self.port = free_port()
        self.agent_password = secrets.token_urlsafe(18)
        self.router_password = secrets.token_urlsafe(18)
        self.admin_password = secrets.token_urlsafe(18)
        self.control_password = secrets.token_urlsafe(18)
        self.mcp_password = secrets.token_urlsafe(18)
        self.process: subprocess.Popen[bytes] | None = None
        self.started_once = False
        self._write_config()

    @property
    def agent_url(self) -> str:
        return f"redis://agent:{self.agent_password}@127.0.0.1:{self.port}/0"

    @property
    def router_url(self) -> str:
        return f"redis://router:{self.router_password}@127.0.0.1:{self.port}/0"

    @property
    def control_url(self) -> str:
        return f"redis://control:{self.control_password}@127.0.0.1:{self.port}/0"

    @property
    def mcp_url(self) -> str:
        return f"redis://mcp:{self.mcp_password}@127.0.0.1:{self.port}/0"

    @property
    def admin_url(self) -> str:
        return f"redis://admin:{self.admin_password}@127.0.0.1:{self.port}/0"

    def admin_client(self) -> redis.Redis:
        return redis.Redis.from_url(self.admin_url, decode_responses=True, socket_timeout=10)

    def _write_config(self) -> None:
        acl = render_acl(self.keys, self.agent_password, self.router_password, self.admin_password,
                         self.control_password, self.mcp_password)
        (self.dir / "users.acl").write_text(acl, encoding="utf-8")
        lines = [
            f"port {self.port}", "bind 127.0.0.1", f"dir {self.dir}", "aclfile users.acl",
            'save ""', "logfile redis.log", "daemonize no",
            f"appendonly {'yes' if self.persistent else 'no'}", "appendfsync always",
            "proto-max-bulk-len 16mb",  # as the stack's (scripts/stack_redis.py)
        ]
        (self.dir / "redis.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def start(self) -> None:
        """Start and wait until it answers. A first start whose port was taken meanwhile (by another
        test worker or any client's ephemeral port) moves to a new free port; a restart keeps its port."""
        if self.process is not None:
            raise RuntimeError("redis-server already running")
        for _ in range(PORT_TRIES):
            self.process = subprocess.Popen(
                [REDIS_SERVER_BINARY, str(self.dir / "redis.conf")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir,
            )
            try:
                self._wait_ready()
            except PortTaken:
                self.process = None
                if self.started_once:
                    raise
                (self.dir / "redis.log").unlink(missing_ok=True)
                self.port = free_port()
                self._write_config()
                continue
            self.started_once = True
            return
        raise RuntimeError(f"redis-server found no free port in {PORT_TRIES} tries")

    def _wait_ready(self, deadline_seconds: float = 15.0) -> None:
        deadline = time.monotonic() + deadline_seconds
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                log = (self.dir / "redis.log").read_text(errors="replace")[-2000:]
                failure = PortTaken if "Address already in use" in log else RuntimeError
                raise failure(f"redis-server exited with {self.process.returncode}:\n{log}")
            try:
                # Short timeouts: whatever else may listen on the port must not hold this loop.
                client = redis.Redis.from_url(self.admin_url, socket_timeout=1, socket_connect_timeout=1)
                try:
                    if client.ping():
                        return
                finally:
                    client.close()
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not become ready")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM our own redis-server (it fsyncs the AOF) and wait for it."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class RedisUrls:
    """What one test gets: the server (for restarts/admin) and each user's URL."""

    server: RedisServer
    agent_url: str
    router_url: str
    keys: Keys

    @property
    def control_url(self) -> str:
        return self.server.control_url

    @property
    def mcp_url(self) -> str:
        return self.server.mcp_url

    def admin_client(self) -> redis.Redis:
        return self.server.admin_client()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


def clean(server: RedisServer) -> None:
    """Leave the server as new: no client of an earlier test (one not closed yet would show in
    CLIENT LIST and still be able to write), then no data."""
    admin = server.admin_client()
    try:
        for kind in ("normal", "pubsub"):
            admin.client_kill_filter(_type=kind, skipme=True)
        admin.flushall()
    finally:
        admin.close()


@pytest.fixture
def redis_urls(redis_server: RedisServer) -> Iterator[RedisUrls]:
    """The session's server, clean for this test (a test that needs a clean db gets this, not a new
    server: starting one costs far more than cleaning one)."""
    clean(redis_server)
    try:
        yield RedisUrls(redis_server, redis_server.agent_url, redis_server.router_url, redis_server.keys)
    finally:
        admin = redis_server.admin_client()
        admin.flushall()
        admin.close()


@pytest.fixture
def admin(redis_urls: RedisUrls) -> Iterator[redis.Redis]:
    """A client of the test Redis as its admin user, closed after the test."""
    client = redis_urls.admin_client()
    yield client
    client.close()
