"""A real Redis Cluster on loopback: three `redis-server --cluster-enabled yes` masters (no
replicas), joined by `redis-cli --cluster create`, each with SafeClaw's generated ACL users and
the same passwords, so a login works on whichever node holds a key's slot.

`url(user)` gives the `redis+cluster://` URL every SafeClaw process takes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import redis

from tests.support.redis_server import REDIS_SERVER_BINARY, RedisServer, free_port

REDIS_CLI_BINARY = "/usr/bin/redis-cli"
PASSWORDS = ("agent_password", "router_password", "admin_password", "control_password", "mcp_password")
NODES = 3


def cluster_support() -> str | None:
    """Why this machine cannot run a cluster, or None when it can."""
    if shutil.which(REDIS_CLI_BINARY) is None:
        return f"{REDIS_CLI_BINARY} is not installed"
    probe = subprocess.run([REDIS_CLI_BINARY, "--cluster", "help"], capture_output=True, text=True,
                           timeout=10)
    if "create" not in probe.stdout + probe.stderr:
        return "redis-cli has no --cluster create"
    version = subprocess.run([REDIS_SERVER_BINARY, "--version"], capture_output=True, text=True, timeout=10)
    found = re.search(r"v=(\d+)\.", version.stdout)
    if found is None or int(found.group(1)) < 7:  # `cluster-port` (a bus port of its own) is 7.0's
        return f"redis-server is older than 7.0 ({version.stdout.strip()})"
    return None


class ClusterNode(RedisServer):
    """One master: the first node's passwords, and cluster mode with a bus port of its own."""

    def __init__(self, like: RedisServer | None = None) -> None:
        self.like = like
        self.bus_port = free_port()
        super().__init__(like.keys if like else None, persistent=True)
        if like is not None:
            for name in PASSWORDS:
                setattr(self, name, getattr(like, name))
            self._write_config()

    def _write_config(self) -> None:
        super()._write_config()
        lines = ["cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 5000",
                 f"cluster-port {self.bus_port}"]
        with open(self.dir / "redis.conf", "a", encoding="utf-8") as conf:
            conf.write("\n".join(lines) + "\n")


class RedisClusterSet:
    def __init__(self) -> None:
        first = ClusterNode()
        self.nodes = [first, *(ClusterNode(first) for _ in range(NODES - 1))]
        try:
            for node in self.nodes:
                node.start()
            self._create()
        except BaseException:
            self.cleanup()
            raise

    @property
    def keys(self):
        return self.nodes[0].keys

    def _create(self) -> None:
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        done = subprocess.run(
            [REDIS_CLI_BINARY, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes",
             "--user", "admin", "--pass", self.nodes[0].admin_password, "--no-auth-warning"],
            capture_output=True, text=True, timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{done.stdout}\n{done.stderr}")
        deadline = time.monotonic() + 30
        while not all(self._ok(node) for node in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach cluster_state:ok")
            time.sleep(0.1)

    @staticmethod
    def _ok(node: ClusterNode) -> bool:
        client = node.admin_client()
        try:
            return "cluster_state:ok" in client.execute_command("CLUSTER", "INFO")
        finally:
            client.close()

    def url(self, user: str) -> str:
        password = getattr(self.nodes[0], f"{user}_password")
        hosts = ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)
        return f"redis+cluster://{user}:{password}@{hosts}"

    def admin_client(self) -> redis.RedisCluster:
        return redis.RedisCluster.from_url(self.nodes[0].admin_url.removesuffix("/0"), decode_responses=True,
                                           socket_timeout=10)

    def cleanup(self) -> None:
        for node in self.nodes:
            node.cleanup()
