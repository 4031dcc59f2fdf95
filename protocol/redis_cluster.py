"""SafeClaw on a Redis Cluster (`redis+cluster://`): redis-py's `RedisCluster`, with every round trip
of several commands sent to the one node that holds SafeClaw's slot.

Every key shares the hash tag of `protocol.keys`, so one node holds them all. redis-py's cluster
pipeline would split a round trip by node and refuses EVALSHA (the router's claim script); a plain
pipeline on that node does neither, and keeps MULTI possible. Single commands (BLMOVE, GET, ...) go
through `RedisCluster` itself, which follows MOVED and ASK redirects and learns the slots' nodes.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.cluster import RedisCluster

from protocol.keys import HASH_TAG, Keys
from protocol.redis_address import RedisAddress


def untagged_on_cluster(address: RedisAddress, keys: Keys) -> str | None:
    """Why these key names cannot be used on this address (a cluster, a name without the tag)."""
    names = keys.untagged()
    if not address.is_cluster or not names:
        return None
    return (f"on a Redis Cluster every key name must start with {HASH_TAG} so SafeClaw's keys share "
            f"one slot: {', '.join(names)} does not (COMMAND_QUEUE / RESPONSE_PREFIX; docs/deploy.md)")


class SlotMoved(redis.ConnectionError):
    """A node's pipeline was answered MOVED or ASK: the slot moved since the client last looked.
    Nothing ran; Redis is unavailable to this round trip until the client learns the new node."""


def slot_client(conn: redis.Redis | RedisCluster, key: str | bytes = HASH_TAG) -> redis.Redis:
    """`conn` itself, or on a cluster the client of the node that holds `key`'s slot."""
    if not isinstance(conn, RedisCluster):
        return conn
    return conn.get_redis_connection(conn.get_node_from_key(key))


def disconnect_idle(conn: redis.Redis | RedisCluster) -> None:
    """Close the idle pooled connections (of every node, on a cluster); those in use stay."""
    if not isinstance(conn, RedisCluster):
        conn.connection_pool.disconnect(inuse_connections=False)
        return
    for node in conn.get_nodes():
        if node.redis_connection is not None:
            node.redis_connection.connection_pool.disconnect(inuse_connections=False)


def raise_moved(answers: list[Any]) -> None:
    for answer in answers:
        if isinstance(answer, redis.exceptions.MovedError | redis.exceptions.AskError):
            raise SlotMoved(f"a Redis Cluster slot moved ({answer})")


class SlotPipeline(redis.client.Pipeline):
    """A pipeline on the node of SafeClaw's slot: a MOVED or ASK answer raises `SlotMoved`."""

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        answers: list[Any] = super().execute(raise_on_error=False)
        raise_moved(answers)
        if raise_on_error:
            for answer in answers:
                if isinstance(answer, Exception):
                    raise answer
        return answers


class TaggedCluster(RedisCluster):
    """`RedisCluster` whose pipelines go to the node of SafeClaw's slot, whole."""

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        """No MULTI unless `transaction=True` (RedisCluster's own default, which its multi-key
        commands such as DEL rely on), on the slot's node."""
        node = slot_client(self)
        return SlotPipeline(node.connection_pool, node.response_callbacks, bool(transaction), shard_hint)
