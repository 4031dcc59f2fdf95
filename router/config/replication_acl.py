"""The two Redis users a replicated deployment adds to SafeClaw's ACL (`router.config.redis_acl`):

- `replica`: what a replica needs to copy its primary (PSYNC, REPLCONF, PING). Every server of the
  set logs in with it to whichever one is the primary (`masteruser replica` in its config), since
  after a failover the old primary becomes a replica of the new one.
- `sentinel`: what Sentinel needs to watch the servers and carry out a failover (INFO, ROLE, the
  hello channel, REPLICAOF, CONFIG REWRITE, CLIENT KILL, MULTI/EXEC around its reconfiguration),
  as Redis's Sentinel documentation lists it. No key: it reads and writes no data.

Neither may read or write a key of SafeClaw's.
"""

from __future__ import annotations

from router.config.redis_acl import password_hash

REPLICA_USER = "replica"
SENTINEL_USER = "sentinel"
REPLICA_COMMANDS = ("+psync", "+replconf", "+ping")
SENTINEL_COMMANDS = ("+multi", "+exec", "+slaveof", "+replicaof", "+ping", "+subscribe", "+publish",
                     "+config|rewrite", "+role", "+info", "+client|setname", "+client|kill", "+script|kill")


def replica_user(password: str) -> str:
    rules = ["resetkeys", "resetchannels", "-@all", *REPLICA_COMMANDS]
    return " ".join(["user", REPLICA_USER, "on", password_hash(password), *rules])


def sentinel_user(password: str) -> str:
    rules = ["resetkeys", "allchannels", "-@all", *SENTINEL_COMMANDS]
    return " ".join(["user", SENTINEL_USER, "on", password_hash(password), *rules])


def replication_lines(replica_password: str, sentinel_password: str) -> str:
    return replica_user(replica_password) + "\n" + sentinel_user(sentinel_password) + "\n"
