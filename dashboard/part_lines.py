"""One line per part of SafeClaw in words, with how to fix it: the agent, each router, Redis, the
LLM and its budget, autonomy, the quotas. Each reads values another process wrote (the agent's
login can write its own keys with anything) and checks every field it uses."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from dashboard import values
from dashboard.values import json_object, number, text, texts
from protocol.autonomy_heartbeat import Heartbeat, stuck_reason
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.llm_cost import is_free
from protocol.skill_words import can_do

log = logging.getLogger("safeclaw.dashboard")
NEAR_BUDGET = 0.8  # a share of the daily budget spent that is worth a look
START_ROUTER = "start it with ./safeclaw (or ./safeclaw router) and read logs/router.log"
START_AGENT = "start it with ./safeclaw (or ./safeclaw agent)"
OK, WARN, BAD, OFF, SETUP, UNKNOWN = "ok", "warn", "bad", "off", "setup", "unknown"


def part(name: str, title: str, state: str, words: str, fix: str = "") -> dict[str, Any]:
    return {"part": name, "title": title, "state": state, "words": words, "fix": fix}


def contained(name: str, title: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One part's line; whatever goes wrong reading it stays in that line."""
    try:
        return build()
    except Exception as exc:
        log.warning("cannot judge %s: %s", name, exc)
        return part(name, title, UNKNOWN, f"cannot be read: {type(exc).__name__}", "see logs/dashboard.log")


def agent_part(raw: Any, now: float) -> dict[str, Any]:
    beat = read_heartbeat(raw)
    if beat is None and raw is not None:
        return part("agent", "Agent", UNKNOWN, "The agent's heartbeat in Redis cannot be read", START_AGENT)
    if beat is None:
        return part("agent", "Agent", OFF, "The agent is not running", START_AGENT)
    channels = ", ".join(texts(beat.get("channels"), 30)) or "no channel"
    if not is_alive(beat, now):
        return part("agent", "Agent", BAD, "The agent stopped beating: it may be stuck or gone", START_AGENT)
    return part("agent", "Agent", OK, f"The agent is running ({channels})")


def contained_routers(routers: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    if not routers:
        return [
            part(
                "routers", "Routers", BAD, "No router is running: nothing can be posted or read", START_ROUTER
            )
        ]
    return [contained("router", "Router", partial(router_part, beat, now)) for beat in routers]


def router_part(beat: dict[str, Any], now: float) -> dict[str, Any]:
    router_id = text(beat.get("router_id"), 64) or "?"
    name, title = f"router:{router_id}", f"Router {router_id}"
    if not is_alive(beat, now):
        last = time.strftime("%H:%M:%S UTC", time.gmtime(number(beat.get("ts")) or now))
        return part(
            name,
            title,
            BAD,
            f"Router {router_id} stopped beating at {last}: it may have crashed",
            START_ROUTER,
        )
    platforms = texts(beat.get("platforms_with_credentials"), 40)
    skills = can_do(texts(beat.get("skills"), 40, 30))
    words = f"Router {router_id} is running: it can {skills}; " + (
        f"connected to {', '.join(platforms)}" if platforms else "no platform connected yet"
    )
    young = texts(beat.get("new_account"), 40, 10)
    if young:
        words += f"; new-account limits on {', '.join(young)} (its first days: fewer posts allowed)"
    problems: list[str] = []
    fixes: list[str] = []
    circuits: dict[str, Any] = beat["circuits"] if isinstance(beat.get("circuits"), dict) else {}
    for platform, info in list(circuits.items())[:10]:
        until = number(info.get("open_until")) if isinstance(info, dict) else None
        when = time.strftime("%H:%M UTC", time.gmtime(until)) if until else "a while"
        problems.append(f"{text(platform, 40)} paused after repeated failures until {when}")
    dead = values.whole(beat.get("dead_letter"))
    if dead:
        problems.append(f"{dead} command(s) set aside as undeliverable (dead letters)")
        fixes.append("read them in logs/router.log; they never run again on their own")
    if problems:
        return part(name, title, WARN, words + "; " + "; ".join(problems), "; ".join(fixes))
    return part(name, title, OK, words)


def quota_part(alive: list[dict[str, Any]]) -> dict[str, Any]:
    """Today's quotas used up, per platform and kind (never summed over platforms)."""
    from dashboard.activity import KIND_WORDS, platform_name
    from dashboard.readers import quotas

    table = quotas([{**b, "alive": True} for b in alive])
    full = [
        f"{platform_name(platform)} {KIND_WORDS.get(kind, kind)} {entry['used']} of {entry['limit']}"
        for platform, kinds in sorted(table.items())
        for kind, entry in sorted(kinds.items())
        if entry["limit"] and entry["used"] >= entry["limit"]
    ]
    if not table:
        return part("quotas", "Quotas", OFF, "No router reports quotas yet")
    if full:
        return part(
            "quotas",
            "Quotas",
            WARN,
            "Used up today: " + "; ".join(full),
            "more are refused until 00:00 UTC; raise ROUTER_QUOTAS in router/.env to allow more",
        )
    return part("quotas", "Quotas", OK, "Every daily quota has room left (see the chart below)")


def redis_part(queue: Any, dead: Any) -> dict[str, Any]:
    waiting, set_aside = values.whole(queue) or 0, values.whole(dead) or 0
    words = f"Redis answers; {waiting} command(s) waiting for a router"
    if set_aside:
        words += f", {set_aside} in the dead-letter list"
    return part("redis", "Redis", OK, words)


def llm_part(agent_raw: Any, cost_raw: Any, now: float) -> dict[str, Any]:
    beat = read_heartbeat(agent_raw)
    cost = json_object(cost_raw) or {}
    today, daily = number(cost.get("today_usd")), number(cost.get("daily_budget_usd"))
    total, overall = number(cost.get("total_usd")), number(cost.get("total_budget_usd"))
    if total is not None and overall is not None and total >= overall:
        return part(
            "llm",
            "LLM",
            BAD,
            f"The total budget is spent (${total:.2f} of ${overall:.2f}): no LLM call is made",
            "raise budget.total_usd in agent/config.json",
        )
    if today is not None and daily is not None and today >= daily:
        return part(
            "llm",
            "LLM",
            BAD,
            f"Today's budget is spent (${today:.2f} of ${daily:.2f}): no LLM call until 00:00 UTC",
            "wait for tomorrow, or raise budget.daily_usd in agent/config.json",
        )
    if beat is None or not is_alive(beat, now):
        return part("llm", "LLM", OFF, "Not in use while the agent is not running")
    name = f"{text(beat.get('llm_provider'), 40) or '?'} {text(beat.get('llm_model'), 80)}".strip()
    report = beat.get("llm") if isinstance(beat.get("llm"), dict) else None
    spent = f"; ${today:.2f} of ${daily:.2f} spent today" if today is not None and daily is not None else ""
    if is_free(beat.get("llm_provider")):
        name = f"The embedded model ({text(beat.get('llm_model'), 80) or '?'})"
        spent, daily = "; free, no money is spent", None
    if report is None:
        return part("llm", "LLM", OK, f"{name}: no call yet{spent}")
    if report.get("ok") is True:
        if today is not None and daily and today >= NEAR_BUDGET * daily:
            return part(
                "llm",
                "LLM",
                WARN,
                f"{name} answers; {today / daily:.0%} of today's budget is spent{spent}",
                "at the budget every LLM call stops until 00:00 UTC; raise budget.daily_usd to allow more",
            )
        return part("llm", "LLM", OK, f"{name} answers{spent}")
    error = text(report.get("error"), 200) or "failing"
    return part(
        "llm",
        "LLM",
        BAD,
        f"{name} fails: {error}",
        "check the provider's key and address in agent/.env; ./safeclaw doctor tests it",
    )


def autonomy_part(raw: Any, now: float) -> dict[str, Any]:
    beat = autonomy_heartbeat(raw)
    if beat is None and raw is not None:
        return part("autonomy", "Autonomy", UNKNOWN, "Autonomy's heartbeat in Redis cannot be read")
    if beat is None:
        return part(
            "autonomy", "Autonomy", OFF, "Autonomy is off",
            "set channels.autonomy.enabled to true in agent/config.json"
        )
    data = json_object(raw) or {}
    reason = stuck_reason(beat, now)
    if reason:
        return part(
            "autonomy",
            "Autonomy",
            BAD,
            f"Autonomy is stuck: {reason}",
            "see workspace/logs/activity.jsonl and the agent log; restarting autonomy clears it",
        )
    paused = text(data.get("paused"), 100)
    if paused:
        return part(
            "autonomy", "Autonomy", WARN, f"Autonomy is paused ({paused}) after cycle {beat.cycle_count}"
        )
    doing = "resting between cycles" if beat.current_action == "idle" else beat.current_action
    return part("autonomy", "Autonomy", OK, f"Autonomy is on: cycle {beat.cycle_count}, {doing}")


def autonomy_heartbeat(raw: Any) -> Heartbeat | None:
    """autonomy's heartbeat with every field of the right type, or None."""
    data = json_object(raw)
    if data is None:
        return None
    numbers = {k: number(data.get(k)) for k in ("timestamp", "action_started_at", "cycle_interval")}
    cycle = values.whole(data.get("cycle_count"))
    if None in numbers.values() or cycle is None or not 0 < (numbers["cycle_interval"] or 0) <= 10**7:
        return None
    return Heartbeat(
        timestamp=numbers["timestamp"] or 0.0,
        current_action=text(data.get("current_action"), 100) or "idle",
        action_started_at=numbers["action_started_at"] or 0.0,
        cycle_count=cycle,
        last_cycle_at=number(data.get("last_cycle_at")),
        cycle_interval=numbers["cycle_interval"] or 1.0,
        pid=values.whole(data.get("pid")) or 0,
    )
