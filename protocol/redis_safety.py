"""Whether a Redis may hold SafeClaw's keys: the primary, and one that never evicts a key.

Every guarantee (nothing lost, nothing run twice, audit before effect) rests on Redis keeping what
it acknowledged. A Redis that evicts (`maxmemory` set with any `maxmemory-policy` but `noeviction`)
drops queued commands, claims and idempotency records when it fills up: a volatile-* policy drops
exactly the records SafeClaw keeps with a TTL. A replica given as the primary refuses writes, or
worse, serves data a failover has thrown away. So every connection any SafeClaw process opens reads
`INFO memory replication` right after its login (`CheckedConnection`, mixed into the connection
classes of `protocol.redis_link`), and one that fails is closed and raised as `RedisUnsafe`: a
`redis.ConnectionError`, so code that waits out an outage waits this out too, and an entry point
that starts on it stops with `refusal.reason` (what is wrong and how to fix it).

INFO, not CONFIG GET: CONFIG would let a login read `masterauth` and every other setting; the ACL
(`router.config.redis_acl`) gives each login only `INFO memory` and `INFO replication`.

`REDIS_ACCEPT_EVICTION=<policy>` accepts that one policy, for a Redis dedicated to SafeClaw whose
owner chose it knowingly: the exact name must be typed, so another policy set later is refused again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis

from protocol.redis_cluster import slot_client

NOEVICTION = "noeviction"
ACCEPT_EVICTION_SETTING = "REDIS_ACCEPT_EVICTION"
INFO_SECTIONS = ("memory", "replication")
EVICTION_FIX = (
    "set `maxmemory-policy noeviction` in its redis.conf (and `CONFIG SET maxmemory-policy noeviction` "
    "on the running server), or give SafeClaw a Redis of its own with noeviction"
)


class RedisUnsafe(redis.ConnectionError):
    """This Redis must not hold SafeClaw's keys now (`reason` says why and how to fix it)."""

    def __init__(self, reason: str, kind: str = "eviction") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # "replica" (not the primary) or "eviction" (may drop keys)


def parse_info(text: str) -> dict[str, str]:
    """INFO's `name:value` lines (section headers and blank lines left out)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and not line.startswith("#"):
            fields[name.strip()] = value.strip()
    return fields


def check_info(info: Mapping[str, Any], where: str, accepted: str = "") -> None:
    """`RedisUnsafe` when the Redis that answered `info` must not be used. `accepted`: the one
    policy the owner typed in REDIS_ACCEPT_EVICTION (empty: none)."""
    role = str(info.get("role", ""))
    if role != "master":
        raise RedisUnsafe(
            f"Redis at {where} is a replica (role:{role or 'unknown'}), not the primary: it refuses writes "
            "or serves data a failover may have discarded. Give the primary's address, or a "
            "redis+sentinel:// URL so every process follows the primary (docs/deploy.md)", "replica"
        )
    reason = eviction_reason(info, where, accepted)
    if reason is not None:
        raise RedisUnsafe(reason)


def eviction_reason(info: Mapping[str, Any], where: str, accepted: str = "") -> str | None:
    """Why a Redis with this `info` may drop SafeClaw's keys, or None when it keeps every key."""
    policy = str(info.get("maxmemory_policy", ""))
    try:
        maxmemory = int(info.get("maxmemory", 0))
    except (TypeError, ValueError):
        maxmemory = -1  # unreadable: assume a limit, so the policy decides
    if not policy:
        return (f"Redis at {where} did not say its maxmemory-policy (INFO memory): SafeClaw cannot "
                "tell whether it drops keys")
    if maxmemory == 0 or policy == NOEVICTION:
        return None  # no limit, or a full Redis refuses writes (OOM) instead of dropping keys
    if accepted and policy == accepted:
        return None
    return (
        f"Redis at {where} may drop SafeClaw's keys: maxmemory-policy is {policy} with maxmemory "
        f"{maxmemory} bytes, so when it fills up it evicts queued commands, claims and records (a "
        f"command lost, or run twice). Fix: {EVICTION_FIX}. For a Redis dedicated to SafeClaw only, "
        f"{ACCEPT_EVICTION_SETTING}={policy} accepts this policy knowingly"
    )


def info_text(answer: Any) -> str:
    """INFO's answer as text, however the connection decodes (bytes, text, or RESP3's verbatim)."""
    if isinstance(answer, bytes):
        return answer.decode("utf-8", "replace")
    return str(answer)


def denied_info(where: str, exc: redis.ResponseError) -> str:
    return (
        f"Redis at {where} refused `INFO memory replication` to this login ({exc}): SafeClaw reads "
        "maxmemory-policy and the role before using a Redis. Regenerate the ACL file "
        "(`./safeclaw python -m router.config.redis_acl`, which grants INFO memory and replication)"
    )


class CheckedConnection:
    """Mixed into a redis-py connection class: right after the login, INFO says whether this Redis
    may be used; if not, `RedisUnsafe` (redis-py then closes the socket)."""

    accepted_eviction: str = ""  # set on the class built for a process (protocol.redis_link)
    host: str
    port: int

    def on_connect_check_health(self, check_health: bool = True) -> None:
        super().on_connect_check_health(check_health=check_health)  # type: ignore[misc]
        self.send_command("INFO", *INFO_SECTIONS, check_health=False)  # type: ignore[attr-defined]
        try:
            answer = self.read_response()  # type: ignore[attr-defined]
        except redis.exceptions.NoPermissionError as exc:
            raise RedisUnsafe(denied_info(self.where, exc)) from None
        except redis.ResponseError as exc:  # not a refusal: a link answering garbage, try again
            raise redis.ConnectionError(f"Redis at {self.where} answered INFO with an error: {exc}") from None
        check_info(parse_info(info_text(answer)), self.where, self.accepted_eviction)

    @property
    def where(self) -> str:
        path = getattr(self, "path", "")
        return str(path) if path else f"{getattr(self, 'host', '?')}:{getattr(self, 'port', '?')}"


class CheckedAsyncConnection:
    """`CheckedConnection` for `redis.asyncio` connections (the MCP server's)."""

    accepted_eviction: str = ""

    async def on_connect_check_health(self, check_health: bool = True) -> None:
        await super().on_connect_check_health(check_health=check_health)  # type: ignore[misc]
        await self.send_command("INFO", *INFO_SECTIONS, check_health=False)  # type: ignore[attr-defined]
        where = f"{getattr(self, 'host', '?')}:{getattr(self, 'port', '?')}"
        try:
            answer = await self.read_response()  # type: ignore[attr-defined]
        except redis.exceptions.NoPermissionError as exc:
            raise RedisUnsafe(denied_info(where, exc)) from None
        except redis.ResponseError as exc:  # not a refusal: a link answering garbage, try again
            raise redis.ConnectionError(f"Redis at {where} answered INFO with an error: {exc}") from None
        check_info(parse_info(info_text(answer)), where, self.accepted_eviction)


def current_eviction(conn: redis.Redis, where: str, accepted: str = "") -> str | None:
    """Ask a live client now (a running router, on its heartbeat) whether its Redis may drop keys:
    why, or None. Redis unavailable raises as usual (a new connection to a replica: `RedisUnsafe`);
    a refused INFO is a reason. The role needs no asking here: a demoted primary refuses the next
    write (READONLY), and the connection that replaces it checks the role. On a cluster: the node
    holding SafeClaw's slot (a cluster client would ask whichever node it picks)."""
    try:
        info = slot_client(conn).execute_command("INFO", *INFO_SECTIONS)
    except redis.exceptions.NoPermissionError as exc:
        return denied_info(where, exc)
    except redis.ResponseError as exc:  # not a refusal: a link answering garbage, unavailable for now
        raise redis.ConnectionError(f"Redis at {where} answered INFO with an error: {exc}") from None
    if not isinstance(info, Mapping):
        info = parse_info(info_text(info))
    return eviction_reason(info, where, accepted)
