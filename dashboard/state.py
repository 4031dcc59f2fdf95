"""The state band: the kill switch, the dry run, and one line per part in words with how to fix it.

Everything comes from one Redis pipeline (one round trip; the router heartbeat keys are found
by `RouterKeys`, which scans at most every few seconds). Each part is judged on its own: a value
the agent's login wrote that cannot be read makes that one line say so, never the whole answer
fail (issue 18 item 14). A router is alive by the one rule of `protocol.heartbeat`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from dashboard import values
from dashboard.part_lines import (
    BAD,
    OFF,
    OK,
    SETUP,
    UNKNOWN,
    WARN,
    agent_part,
    autonomy_part,
    contained,
    contained_routers,
    llm_part,
    part,
    quota_part,
    redis_part,
)
from dashboard.values import agent_value, all_read, number, read_agent_key, text, texts
from protocol import kill_switch
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.keys import Keys

log = logging.getLogger("safeclaw.dashboard")
ROUTER_RESCAN_SECONDS = 5.0
WHO = {"dashboard": "you, from the dashboard"}  # kill_switch.flip's `by`, in the owner's words
SEVERITY = {OK: 0, OFF: 0, SETUP: 0, UNKNOWN: 1, WARN: 1, BAD: 2}


class RouterKeys:
    """The router heartbeat keys, found by SCAN at most every ROUTER_RESCAN_SECONDS (a SCAN walks
    the whole keyspace; a request must not)."""

    def __init__(self, keys: Keys, clock: Callable[[], float] = time.monotonic) -> None:
        self.keys = keys
        self.clock = clock
        self._found: list[str] = []
        self._at = -ROUTER_RESCAN_SECONDS
        self._lock = threading.Lock()

    def get(self, conn: redis.Redis) -> list[str]:
        with self._lock:
            if self.clock() - self._at >= ROUTER_RESCAN_SECONDS:
                pattern = self.keys.router_heartbeat("*")
                self._found = sorted(str(k) for k in conn.scan_iter(match=pattern, count=1000))[:100]
                self._at = self.clock()
            return list(self._found)


def read_raw(conn: redis.Redis, keys: Keys, router_keys: list[str]) -> dict[str, Any]:
    """Every value the band needs, in one round trip."""
    pipe = conn.pipeline(transaction=False)
    read_agent_key(pipe, keys.agent_heartbeat)
    pipe.get(keys.kill_switch)
    read_agent_key(pipe, keys.agent_autonomy)
    read_agent_key(pipe, keys.agent_cost)
    pipe.llen(keys.command_queue)
    pipe.llen(keys.dead_letter)
    pipe.zcard(keys.approvals_pending)
    for key in router_keys:
        pipe.get(key)
    found: list[Any] = all_read(pipe.execute(raise_on_error=False), (0, 2, 3))
    names = ("agent", "kill", "autonomy", "cost", "queue", "dead", "approvals")
    raw = dict(zip(names, found[:7], strict=True))
    raw |= {name: agent_value(raw[name]) for name in ("agent", "autonomy", "cost")}
    return {**raw, "routers": found[7:]}


def status(raw: dict[str, Any] | None, now: float, redis_error: str = "") -> dict[str, Any]:
    """The band: `level` (red/amber/green/setup), `headline`, the kill switch, the dry run, parts."""
    if raw is None:
        why = redis_error or "it does not answer"
        redis_line = part(
            "redis",
            "Redis",
            BAD,
            f"Redis cannot be reached ({why}): nothing else can be read",
            "start it (./safeclaw starts it) and check REDIS_URL in dashboard/.env",
        )
        return {
            "level": "red",
            "headline": "Redis does not answer: the state of everything else is unknown",
            "kill_switch": None,
            "dry_run": {"on": False, "routers": [], "words": ""},
            "setup": {"needed": False, "words": ""},
            "parts": [redis_line],
            "pending_approvals": None,
            "ts": now,
        }
    beats = [read_heartbeat(v) for v in raw["routers"]]
    routers = [b for b in beats if b is not None]
    alive = [b for b in routers if is_alive(b, now)]
    kill = contained("kill_switch", "Kill switch", lambda: kill_state(raw["kill"], alive))
    dry = dry_run(alive)
    setup = setup_state(alive)
    pending = values.whole(raw["approvals"]) or 0
    parts = [
        contained("agent", "Agent", lambda: agent_part(raw["agent"], now)),
        *contained_routers(routers, now),
        contained("redis", "Redis", lambda: redis_part(raw["queue"], raw["dead"])),
        contained("llm", "LLM", lambda: llm_part(raw["agent"], raw["cost"], now)),
        contained("autonomy", "Autonomy", lambda: autonomy_part(raw["autonomy"], now)),
    ]
    parts.append(contained("quotas", "Quotas", lambda: quota_part(alive)))
    if pending:
        parts.append(
            part(
                "approvals",
                "Approvals",
                WARN,
                f"{pending} action(s) wait for your approval: decide on each under Approvals below",
            )
        )
    worst = max((SEVERITY.get(p["state"], 1) for p in parts), default=0)
    if kill.get("on"):
        level, headline = "red", "Posting is stopped"
    elif dry["on"]:
        level, headline = "amber", dry["words"]
    elif setup["needed"] and worst < 2:
        level, headline = "setup", setup["words"]
    else:
        level = ("green", "amber", "red")[worst]
        named = ", ".join(p["title"] for p in parts if SEVERITY.get(p["state"], 1) == worst)
        headline = ("All is well", f"Needs a look: {named}", f"Something is wrong: {named}")[worst]
    return {
        "level": level,
        "headline": headline,
        "kill_switch": kill,
        "dry_run": dry,
        "setup": setup,
        "parts": parts,
        "pending_approvals": pending,
        "ts": now,
    }


def kill_state(raw: Any, alive: list[dict[str, Any]]) -> dict[str, Any]:
    live = kill_switch.parse(raw)
    floor = [text(b.get("router_id"), 64) or "?" for b in alive if b.get("kill_switch_floor") is True]
    posting = [text(b.get("router_id"), 64) or "?" for b in alive if b.get("kill_switch_floor") is not True]
    since = number(live.since)
    if live.on:
        words = (
            "The kill switch is on: every post, reply, like and delete is refused. "
            f"Turned on by {WHO.get(live.by, live.by) or 'someone unknown'}"
        )
    elif floor and posting:  # never "stopped" while a router still posts
        words = (f"Router {', '.join(posting)} still posts: only router {', '.join(floor)} refuses every "
                 "write (ROUTER_KILL_SWITCH=true in its settings); turn the kill switch on to stop them all")
    elif floor:
        words = f"Posting is stopped: ROUTER_KILL_SWITCH=true in the settings of router {', '.join(floor)}"
    else:
        words = "Posting is allowed: the routers post, reply, like and delete within your rules"
    fix = ""
    if floor:
        fix = "set ROUTER_KILL_SWITCH=false in router/.env and restart the router (this page cannot lift it)"
    return {
        "part": "kill_switch",
        "on": live.on or (bool(floor) and not posting),
        "by": live.by,
        "since": since,
        "environment_floor": floor,
        "liftable": live.on and not (floor and not posting),
        "words": words,
        "fix": fix,
    }


def dry_run(alive: list[dict[str, Any]]) -> dict[str, Any]:
    ids = [text(b.get("router_id"), 64) or "?" for b in alive if b.get("dry_run") is True]
    sending = [text(b.get("router_id"), 64) or "?" for b in alive if b.get("dry_run") is not True]
    words = ""
    if ids and not sending:
        words = "Dry run: nothing is sent; posts go to router/outbox.jsonl"
    elif ids:  # never "nothing is sent" while a router sends for real
        words = (f"Router {', '.join(sending)} sends for real; only router {', '.join(ids)} is in dry run "
                 "(its posts go to router/outbox.jsonl)")
    return {"on": bool(ids), "routers": ids, "words": words}


def setup_state(alive: list[dict[str, Any]]) -> dict[str, Any]:
    connected = {p for b in alive for p in texts(b.get("platforms_with_credentials"), 40)}
    needed = bool(alive) and not connected
    words = (
        "Set up: no platform connected yet. Add a platform's credentials to router/.env "
        "(see docs/settings.md) and restart the router"
        if needed
        else ""
    )
    return {"needed": needed, "words": words, "platforms": sorted(connected)}
