"""A real Redis Cluster on loopback: three `redis-server --cluster-enabled yes` masters (with
`replicas=1`, each with a replica of its own), joined by `redis-cli --cluster create`, each with
SafeClaw's generated ACL users and the same passwords, so a login works on whichever node holds a
key's slot (a replica copies its master as the shipped `replica` user).

`url(user)` gives the `redis+cluster://` URL every SafeClaw process takes; `holder(key)` the master
that serves a key's slot now, `replica_of(node)` its replica.
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import time

import redis

from router.config.replication_acl import REPLICA_USER, replication_lines
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
    """One node: the first node's passwords, and cluster mode with a bus port of its own."""

    def __init__(self, like: ClusterNode | None = None, node_timeout_ms: int = 5000) -> None:
        self.like = like
        self.bus_port = free_port()
        self.node_timeout_ms = node_timeout_ms
        self.replica_password: str = like.replica_password if like else secrets.token_urlsafe(18)
        super().__init__(like.keys if like else None, persistent=True)
        if like is not None:
            for name in PASSWORDS:
                setattr(self, name, getattr(like, name))
            self._write_config()

    def _write_config(self) -> None:
        super()._write_config()
        with open(self.dir / "users.acl", "a", encoding="utf-8") as acl:
            acl.write(replication_lines(self.replica_password, secrets.token_urlsafe(18)))
        lines = ["cluster-enabled yes", "cluster-config-file nodes.conf",
                 f"cluster-node-timeout {self.node_timeout_ms}", f"cluster-port {self.bus_port}",
                 f"masteruser {REPLICA_USER}", f"masterauth {self.replica_password}"]
        with open(self.dir / "redis.conf", "a", encoding="utf-8") as conf:
            conf.write("\n".join(lines) + "\n")


class RedisClusterSet:
    def __init__(self, replicas: int = 0, node_timeout_ms: int = 5000) -> None:
        self.replicas = replicas
        first = ClusterNode(node_timeout_ms=node_timeout_ms)
        count = NODES * (1 + replicas)
        self.nodes = [first, *(ClusterNode(first, node_timeout_ms) for _ in range(count - 1))]
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
            [REDIS_CLI_BINARY, "--cluster", "create", *addresses, "--cluster-replicas", str(self.replicas),
             "--cluster-yes",
             "--user", "admin", "--pass", self.nodes[0].admin_password, "--no-auth-warning"],
            capture_output=True, text=True, timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{done.stdout}\n{done.stderr}")
        deadline = time.monotonic() + 30
        while not all(self._ok(node) for node in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach cluster_state:ok (every replica in sync)")
            time.sleep(0.1)

    @staticmethod
    def _ok(node: ClusterNode) -> bool:
        """The node sees the cluster ok, and a replica's link to its master is up."""
        if node.process is None:
            return True
        client = node.admin_client()
        try:
            if "cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                return False
            info = client.info("replication")
            return info.get("role") == "master" or info.get("master_link_status") == "up"
        finally:
            client.close()

    def all_ok(self) -> bool:
        return all(self._ok(node) for node in self.nodes)

    def node_at(self, port: int) -> ClusterNode:
        return next(node for node in self.nodes if node.port == port)

    def holder(self, key: str) -> ClusterNode:
        """The master that serves `key`'s slot now, as a live node sees it."""
        live = next(node for node in self.nodes if node.process is not None)
        client = live.admin_client()
        try:
            slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
            for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
                if int(start) <= slot <= int(end):
                    return self.node_at(int(master[1]))
        finally:
            client.close()
        raise RuntimeError(f"no node serves the slot of {key}")

    def replica_of(self, master: ClusterNode) -> ClusterNode:
        client = master.admin_client()
        try:
            node_id = str(client.execute_command("CLUSTER", "MYID"))
            replicas = client.execute_command("CLUSTER", "REPLICAS", node_id)
        finally:
            client.close()
        address = str(replicas[0]).split()[1]  # "<id> 127.0.0.1:port@bus ..."
        return self.node_at(int(address.split("@")[0].rsplit(":", 1)[1]))

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
