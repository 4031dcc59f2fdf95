"""The private Redis of `./safeclaw`: loopback only, a free port, SafeClaw's ACL users, data kept.

Passwords are generated once into files only the owner can read (`<run dir>/redis/*.password`)
and reused by later runs, so the append-only file in the same folder keeps queued commands
across restarts. Nothing here prints a password.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from protocol.keys import Keys
from router.config.redis_acl import password_hash, render_acl
from scripts.stack_env import read_env_file, write_runtime_env
from scripts.stack_processes import Stack, StackError, die_with_parent, say, shown_path

READY_SECONDS = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_or_create_secret(path: Path) -> str:
    """The password in `path`, created (mode 0600) on first use."""
    if path.is_file():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    value = secrets.token_urlsafe(24)  # URL-safe: goes into REDIS_URL without escaping
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    return value


def find_redis_server() -> str:
    binary = shutil.which("redis-server")
    if binary is None and Path("/usr/sbin/redis-server").exists():
        binary = "/usr/sbin/redis-server"
    if binary is None:
        raise StackError(
            "redis-server is not installed: install it (Debian/Ubuntu: `sudo apt-get install redis-server`, "
            "macOS: `brew install redis`), or set REDIS_URL in agent/.env and router/.env to use "
            "another Redis"
        )
    return binary


def upgrade_user(password: str) -> str:
    """The login that renames old-named keys: SCAN and RENAMENX on SafeClaw's keys, nothing else."""
    return (f"user upgrade on {password_hash(password)} ~safeclaw:* ~{{safeclaw}}:* resetchannels -@all "
            "+scan +renamenx +ping\n")


class PrivateRedis:
    """One redis-server this process starts and stops; its files live in `<run_dir>/redis/`."""

    def __init__(self, run_dir: Path, keys: Keys) -> None:
        self.dir = run_dir / "redis"
        self.keys = keys
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.agent_password = read_or_create_secret(self.dir / "agent.password")
        self.router_password = read_or_create_secret(self.dir / "router.password")
        self.control_password = read_or_create_secret(self.dir / "control.password")
        self.mcp_password = read_or_create_secret(self.dir / "mcp.password")
        # Renames the keys an earlier SafeClaw wrote here before the cluster hash tag, nothing else.
        self.upgrade_password = read_or_create_secret(self.dir / "upgrade.password")
        self.admin_password: str | None = None  # a test's own all-powerful login, never the stack's

    def url(self, user: str) -> str:
        passwords = {"agent": self.agent_password, "router": self.router_password,
                     "control": self.control_password, "mcp": self.mcp_password,
                     "upgrade": self.upgrade_password, "admin": self.admin_password or ""}
        return f"redis://{user}:{passwords[user]}@127.0.0.1:{self.port}/0"

    def write_config(self) -> Path:
        acl = self.dir / "users.acl"
        acl.write_text(render_acl(self.keys, self.agent_password, self.router_password, self.admin_password,
                                  control_password=self.control_password, mcp_password=self.mcp_password)
                       + upgrade_user(self.upgrade_password), encoding="utf-8")
        acl.chmod(0o600)
        lines = [
            f"port {self.port}", "bind 127.0.0.1", "protected-mode yes", f'dir "{self.dir}"',
            "aclfile users.acl", "appendonly yes", "appendfsync everysec",
            "save 3600 1 300 100 60 10000", "logfile redis.log", "daemonize no",
            # No value past 16 MB from any login: a 500 MB queue item would take a router gigabytes
            # to receive (it refuses to decode one past router.pipeline.MAX_COMMAND_BYTES, 8 MB).
            "proto-max-bulk-len 16mb",
        ]
        conf = self.dir / "redis.conf"
        conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return conf

    def start(self, preexec: Callable[[], None] | None = None, wait: bool = True) -> int:
        """Start redis-server; with `wait`, return once it answers (else call `wait_ready`)."""
        binary = find_redis_server()
        self.port = free_port()
        conf = self.write_config()
        self.process = subprocess.Popen(
            [binary, str(conf)], cwd=self.dir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec,
        )
        if wait:
            self.wait_ready()
        return self.process.pid

    def wait_ready(self) -> None:
        import redis  # here, not at the top: Redis and the router start before the runner imports it

        deadline = time.monotonic() + READY_SECONDS
        client = redis.Redis.from_url(self.url("agent"), socket_connect_timeout=1, socket_timeout=2)
        try:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    tail = self.log_tail()
                    if "Address already in use" in tail:
                        raise StackError(f"the private Redis could not listen on 127.0.0.1:{self.port}: "
                                         "another program took the port as it started; run ./safeclaw again")
                    raise StackError(f"redis-server exited with code {self.process.returncode}; "
                                     f"see {self.dir / 'redis.log'}\n{tail}")
                try:
                    if client.ping():
                        return
                except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
                    pass
                if time.monotonic() > deadline:
                    raise StackError(f"redis-server did not answer within {READY_SECONDS:.0f}s; "
                                     f"see {self.dir / 'redis.log'}")
                time.sleep(0.05)
        finally:
            client.close()

    def upgrade_key_names(self) -> None:
        """Keys an earlier SafeClaw kept here under the names before the hash tag (queued commands,
        idempotency records, approvals) move to today's names, so none is lost or run twice."""
        import redis

        from scripts.tag_redis_keys import tag_keys

        conn = redis.Redis.from_url(self.url("upgrade"), socket_connect_timeout=2, socket_timeout=10)
        try:
            renamed, taken = tag_keys(conn)
        finally:
            conn.close()
        if renamed:
            say(f"moved {len(renamed)} key(s) an earlier SafeClaw kept to today's names")
        if taken:
            say(f"left {len(taken)} key(s) of an earlier SafeClaw as they are: today's names are taken "
                f"({', '.join(taken[:3])}{', …' if len(taken) > 3 else ''})")

    def log_tail(self, lines: int = 8) -> str:
        try:
            text = (self.dir / "redis.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def redis_urls(args: argparse.Namespace, stack: Stack, keys: Keys, agent_file: dict[str, str],
               router_file: dict[str, str]) -> tuple[str, str, str | None, Callable[[], None]]:
    """(agent URL, router URL, control URL or None, wait until it answers): the given Redis, or a
    private one started now. The router may start while the private one gets ready (it needs a
    moment to import, Redis a moment to load)."""
    given = os.environ.get("REDIS_URL") or agent_file.get("REDIS_URL")
    if given:
        router_url = router_file.get("REDIS_URL") or os.environ.get("SAFECLAW_ROUTER_REDIS_URL")
        if not router_url:
            raise StackError("REDIS_URL is given, so the router needs its own login too: set "
                             "REDIS_URL=redis://router:PASSWORD@host:port/0 in router/.env")
        say("using the Redis given by REDIS_URL")
        control = (read_env_file(args.dashboard_env).get("REDIS_URL")
                   or os.environ.get("SAFECLAW_CONTROL_REDIS_URL"))
        return given, router_url, control, lambda: None
    private = PrivateRedis(args.run_dir, keys)
    private.start(die_with_parent, wait=False)
    assert private.process is not None
    stack.record("redis", private.process)

    def ready() -> None:
        private.wait_ready()
        say(f"private Redis on 127.0.0.1:{private.port} (data in {shown_path(private.dir)})")
        private.upgrade_key_names()

    write_runtime_env(args.run_dir / "mcp.env", {"REDIS_URL": private.url("mcp")})  # for ./safeclaw mcp
    return private.url("agent"), private.url("router"), private.url("control"), ready
