"""What the agent sees of the stack on Redis: the login, the running agent's and the routers'
heartbeats, the live kill switch, the dry run the routers report, the queue, and that the ACL holds.

Everything here talks to Redis as the agent's user (its ACL allows PING, LLEN of the command
queue, GET/SCAN of the routers' heartbeats, GET of the kill switch and SET of its own), so
`status` shows exactly what the agent can reach. No line ever shows a password: Redis is named
by host, port and user.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

import redis

from agent.config.settings import AgentSettings
from agent.link.redis_pool import anonymous_client
from agent.status.line import Check, first_line
from protocol import kill_switch
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.keys import Keys
from protocol.platform_names import PLATFORM_NAMES
from protocol.redis_address import AddressError, parse_address
from protocol.redis_safety import RedisUnsafe
from protocol.skill_words import verbs

NO_REDIS_URL = ("REDIS_URL is not set: start the whole stack with ./safeclaw, or set "
                "REDIS_URL=redis://agent:PASSWORD@host:port/0 in agent/.env")


def redis_where(url: str) -> str:
    """host:port (or the Sentinels and the primary's name) as user, never the password."""
    try:
        address = parse_address(url)
    except AddressError:
        return "an unreadable REDIS_URL"
    return f"{address.where} as user {address.username or 'default'}"


def running_agent(conn: redis.Redis | None, keys: Keys) -> dict[str, Any] | None:
    """The heartbeat of the agent running on this Redis, when one is alive (protocol.heartbeat's rule)."""
    if conn is None:
        return None
    try:
        beat = read_heartbeat(conn.get(keys.agent_heartbeat))
    except redis.RedisError:
        return None
    return beat if is_alive(beat, time.time()) else None


def check_redis(settings: AgentSettings, conn: redis.Redis | None) -> tuple[Check, redis.Redis | None]:
    """Whether `conn` (the process's pool; None without REDIS_URL) answers: it, if so, else None."""
    if conn is None or not settings.redis_url:
        return Check(False, f"Redis: {NO_REDIS_URL}"), None
    where = redis_where(settings.redis_url)
    try:
        conn.ping()
    except redis.AuthenticationError as exc:
        return Check(False, f"Redis at {where} refused the login ({first_line(exc)}): check REDIS_URL"), None
    except RedisUnsafe as exc:
        return Check(False, f"Redis must not hold SafeClaw's keys: {exc.reason}"), None
    except redis.RedisError as exc:
        return Check(False, f"Redis at {where} does not answer ({no_answer(exc)}): is SafeClaw running? "
                            "Start it with ./safeclaw, or check REDIS_URL"), None
    return Check(True, f"Redis answers at {where}"), conn


def no_answer(exc: redis.RedisError) -> str:
    """Why Redis did not answer, in words (redis-py says "Error 111 connecting to host:port. ...")."""
    if isinstance(exc, redis.TimeoutError):
        return "no answer in time"
    if isinstance(exc, redis.ConnectionError):
        text = str(exc).lower()
        return "connection refused" if "refused" in text else "cannot connect"
    return first_line(exc)


def router_heartbeats(conn: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    """The heartbeat values of the routers that are alive (protocol.heartbeat's one rule)."""
    beats = []
    for key in sorted(conn.scan_iter(match=keys.router_heartbeat("*"), count=100)):
        beat = read_heartbeat(conn.get(key))
        if beat is not None and is_alive(beat, time.time()):
            beats.append(beat)
    return beats


def router_lines(conn: redis.Redis, keys: Keys) -> list[Check]:
    """One short line per live router (or one ✗ line when none is alive): what it can do, in a few
    verbs, and where (the platforms it has an account for)."""
    beats = router_heartbeats(conn, keys)
    if not beats:
        return [Check(False, "no router is alive (no heartbeat), so the dry run is unknown: "
                             "start it with ./safeclaw or `./safeclaw router`")]
    checks = []
    for beat in beats:
        can = verbs(beat.get("skills") or [])
        who = f" {beat.get('router_id', '?')}" if len(beats) > 1 else ""
        where = [PLATFORM_NAMES.get(str(p), str(p)) for p in beat.get("platforms_with_credentials") or []]
        on = f" on {' and '.join([', '.join(where[:-1]), where[-1]] if len(where) > 1 else where)}"
        dead = beat.get("dead_letter")
        set_aside = ""
        if isinstance(dead, int) and dead > 0:
            set_aside = f"; {dead} command(s) could not run and are set aside"
        checks.append(Check(True, f"router{who} up: it can {can}"
                                  f"{on if where else '; no account yet'}{set_aside}"))
    return checks


def posting_lines(conn: redis.Redis, keys: Keys, beats: list[dict[str, Any]]) -> list[Check]:
    """The kill switch and the dry run: states the owner chose, never failures, but marked `!`
    while they keep posts from going out. The live switch is read from its key, where it is set
    (a router's heartbeat shows it only at its next beat); a router's environment floor and its
    dry run are set where it starts, so its heartbeat tells them."""
    floors = [beat for beat in beats if beat.get("kill_switch_floor") is True]
    lines = [Check(True, f"kill switch: ON{router_named(beat, beats)}, set by ROUTER_KILL_SWITCH in the "
                         "router's environment: nothing is posted", notice=True) for beat in floors]
    if not beats or len(floors) < len(beats):
        lines.append(live_switch_line(kill_switch.parse(conn.get(keys.kill_switch)), bool(floors)))
    for beat in beats:
        who = router_named(beat, beats)
        if beat.get("dry_run") is True:
            lines.append(Check(True, f"dry run: on{who}: posts are written to the router's outbox.jsonl, "
                                     "not sent", notice=True))
        elif beat.get("dry_run") is False:
            lines.append(Check(True, f"dry run: off{who}: posts are sent"))
    return lines


def router_named(beat: dict[str, Any], beats: list[dict[str, Any]]) -> str:
    return f" (router {beat.get('router_id', '?')})" if len(beats) > 1 else ""


def live_switch_line(switch: kill_switch.KillState, other_routers: bool) -> Check:
    which = " for the other routers" if other_routers else ""
    if switch.on:
        by = f" by {switch.by}" if switch.by else ""
        return Check(True, f"kill switch: ON{which}{by}: nothing is posted (./safeclaw resume-posting "
                           "lifts it)", notice=True)
    return Check(True, f"kill switch: off{which} (./safeclaw stop-posting stops all posting)")


def queue_line(conn: redis.Redis, keys: Keys) -> Check:
    depth = conn.llen(keys.command_queue)
    return Check(True, f"queue: {depth} command(s) waiting for a router")


def check_acl(conn: redis.Redis, url: str, keys: Keys) -> list[Check]:
    """The agent's user is refused what it must not do, and a login-less client is refused too."""
    checks = []
    try:
        conn.lrange(keys.command_queue, 0, 0)  # reading others' commands: the agent must not
        user = urlsplit(url).username or "default"
        checks.append(Check(False, f"ACL not in force: user {user} may read the command queue; "
                                   "use the agent user of the shipped ACL (router/config/redis_acl.py)"))
    except redis.exceptions.NoPermissionError:
        checks.append(Check(True, "ACL in force: the agent user is refused what it must not run"))
    except redis.RedisError as exc:
        checks.append(Check(False, f"ACL check failed: {first_line(exc)}"))
    anonymous = anonymous_client(url)
    try:
        anonymous.ping()
        checks.append(Check(False, "the Redis default user is on: anyone who reaches the port may run "
                                   "anything; load the ACL file with `user default off`"))
    except (redis.AuthenticationError, redis.exceptions.NoPermissionError, redis.ResponseError):
        checks.append(Check(True, "the Redis default user is off"))
    except redis.RedisError as exc:
        checks.append(Check(False, f"default-user check failed: {first_line(exc)}"))
    finally:
        anonymous.close()
    return checks
