"""What the dashboard shows, read from Redis as the control user (and the governance files).

Each function returns plain JSON-ready data; none writes anything.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from protocol import Keys
from router.policy import approvals

AGENT_HEARTBEAT_TTL = 15.0  # seconds; the agent refreshes its heartbeat every third of it
STUCK_AFTER = 60.0  # a heartbeat older than this is stuck (red); fresher than a period is green
GOVERNANCE_FILES = ("DOS.md", "VIOLATIONS.md", "UNKNOWNS.md", "PROPOSED_RULES.md", "external_overrides.md")
MAX_GOVERNANCE_CHARS = 100_000
COUNTED_KINDS = ("post", "reply", "like")


def _json(raw: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw is not None else None
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _colour(age: float | None, period: float) -> str:
    if age is None:
        return "red"
    return "green" if age <= period else ("yellow" if age <= STUCK_AFTER else "red")


def heartbeats(conn: redis.Redis, keys: Keys, now: float | None = None) -> dict[str, Any]:
    """The agent's and every router's last heartbeat, with its age in seconds."""
    now = time.time() if now is None else now
    agent = _json(conn.get(keys.agent_heartbeat))
    routers = []
    for key in sorted(conn.scan_iter(match=keys.router_heartbeat("*"), count=100)):
        beat = _json(conn.get(key))
        if beat is not None:
            beat["age"] = round(max(0.0, now - float(beat.get("ts", 0))), 1)
            routers.append(beat)
    if agent is not None:
        agent["age"] = round(max(0.0, now - float(agent.get("ts", 0))), 1)
    return {"agent": agent, "routers": routers, "ts": now}


def autonomy(conn: redis.Redis, keys: Keys, now: float | None = None) -> dict[str, Any]:
    """Autonomy's last heartbeat: red when stuck (no heartbeat for 3 intervals, or one step over
    10 minutes, the agent's own rule), yellow while paused, green otherwise."""
    from agent.autonomy.health import stuck_reason
    from agent.autonomy.state import Heartbeat

    data = _json(conn.get(keys.agent_autonomy))
    beat = (
        Heartbeat.from_dict({k: v for k, v in data.items() if k in Heartbeat.__dataclass_fields__})
        if data
        else None
    )
    if beat is None:
        return {"available": False}
    now = time.time() if now is None else now
    reason = stuck_reason(beat, now)
    state = "red" if reason else ("yellow" if data and data.get("paused") else "green")
    return {
        "available": True,
        "state": state,
        "stuck": reason is not None,
        "reason": reason or "",
        "cycle": beat.cycle_count,
        "action": beat.current_action,
        "paused": (data or {}).get("paused") or "",
        "age": round(max(0.0, now - beat.timestamp), 1),
    }


def kill_switch_state(conn: redis.Redis, keys: Keys, routers: list[dict[str, Any]]) -> dict[str, Any]:
    from router.policy import kill_switch

    live = kill_switch.parse(conn.get(keys.kill_switch))
    floors = [r.get("router_id") for r in routers if r.get("kill_switch_floor")]
    return {"on": live.on, "by": live.by, "since": live.since, "environment_floor": floors}


def status(conn: redis.Redis | None, keys: Keys, now: float | None = None) -> dict[str, Any]:
    """Green/yellow/red for the agent, each router, Redis and the LLM, with heartbeat ages."""
    if conn is None:
        return {
            "redis": {"state": "red", "detail": "unreachable"},
            "agent": {"state": "red"},
            "routers": [],
            "llm": {"state": "red", "detail": "unknown: Redis unreachable"},
        }
    beats = heartbeats(conn, keys, now)
    agent = beats["agent"]
    agent_state = {"state": "red", "detail": "no heartbeat"}
    if agent is not None:
        agent_state = {
            "state": _colour(agent["age"], AGENT_HEARTBEAT_TTL / 3 * 2 + 1),
            "age": agent["age"],
            "channels": agent.get("channels", []),
            "pid": agent.get("pid"),
        }
    routers = [
        {
            "router_id": r.get("router_id"),
            "age": r["age"],
            "skills": len(r.get("skills", [])),
            "state": _colour(r["age"], 10.0),
            "platforms": r.get("platforms_with_credentials", []),
            "dry_run": r.get("dry_run"),
        }
        for r in beats["routers"]
    ]
    llm = _llm_state(agent)
    return {
        "redis": {
            "state": "green",
            "queue_depth": int(conn.llen(keys.command_queue)),
            "dead_letters": int(conn.llen(keys.dead_letter)),
        },
        "agent": agent_state,
        "routers": routers,
        "llm": llm,
        "kill_switch": kill_switch_state(conn, keys, beats["routers"]),
        "pending_approvals": int(conn.zcard(keys.approvals_pending)),
        "autonomy": autonomy(conn, keys, now),
        "ts": beats["ts"],
    }


def _llm_state(agent: dict[str, Any] | None) -> dict[str, Any]:
    """From the agent heartbeat: `llm_provider`/`llm_model`, and `llm` {ok, error, ts} when reported."""
    if agent is None:
        return {"state": "red", "detail": "unknown: the agent is not running"}
    name = f"{agent.get('llm_provider', '?')} {agent.get('llm_model') or ''}".strip()
    report = agent.get("llm") if isinstance(agent.get("llm"), dict) else None
    if report is None:
        return {"state": "yellow", "detail": f"{name}: no call reported yet"}
    ok = report.get("ok") is True
    detail = name if ok else f"{name}: {str(report.get('error', 'failing'))[:200]}"
    return {"state": "green" if ok else "red", "detail": detail}


def activity(conn: redis.Redis, keys: Keys, limit: int) -> list[dict[str, Any]]:
    """The newest audit records, newest first."""
    entries: Any = conn.xrevrange(keys.audit_stream, count=limit)
    return [record for _id, fields in entries if (record := _json(fields.get("line"))) is not None]


def activity_since(conn: redis.Redis, keys: Keys, last_id: str) -> tuple[str, list[dict[str, Any]]]:
    """Audit records after stream id `last_id` (oldest first), and the id to continue from."""
    found: Any = conn.xread({keys.audit_stream: last_id}, count=200)
    records: list[dict[str, Any]] = []
    newest = last_id
    for _stream, entries in found or []:
        for entry_id, fields in entries:
            newest = str(entry_id)
            if (record := _json(fields.get("line"))) is not None:
                records.append(record)
    return newest, records


def last_stream_id(conn: redis.Redis, keys: Keys) -> str:
    newest = conn.xrevrange(keys.audit_stream, count=1)
    return str(newest[0][0]) if newest else "0-0"


def stats(conn: redis.Redis, keys: Keys, now: float | None = None) -> dict[str, Any]:
    """Today's (UTC) posts, replies and likes that ran, against the quotas routers publish."""
    now = time.time() if now is None else now
    midnight = dt.datetime.fromtimestamp(now, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = f"{int(midnight.timestamp() * 1000)}-0"
    counts: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    entries: Any = conn.xrange(keys.audit_stream, min=start, max="+")
    for _id, fields in entries:
        record = _json(fields.get("line"))
        if record is None or record.get("decision") == "repeat":
            continue  # a repeat is a stored answer sent again: the command ran once, earlier
        decisions[str(record.get("status"))] += 1
        effect: dict[str, Any] = record["effect"] if isinstance(record.get("effect"), dict) else {}
        if record.get("status") == "ok" and effect.get("kind") in COUNTED_KINDS:
            counts[str(effect["kind"])] += 1
    limits = quota_limits(heartbeats(conn, keys, now)["routers"])
    return {
        "day": midnight.date().isoformat(),
        "today": {kind: {"count": counts[kind], "limit": limits.get(kind)} for kind in COUNTED_KINDS},
        "by_status": dict(decisions),
    }


def quota_limits(routers: list[dict[str, Any]]) -> dict[str, int]:
    """Per-kind daily limits from router heartbeats' `quotas`: {kind: n} or {kind: {"limit": n}}
    (optionally under a platform: {platform: {kind: ...}}, summed). The smallest router's wins."""
    limits: dict[str, int] = {}
    for beat in routers:
        quotas = beat.get("quotas")
        if not isinstance(quotas, dict):
            continue
        found: Counter[str] = Counter()
        for name, value in quotas.items():
            if name in COUNTED_KINDS and (n := _limit(value)) is not None:
                found[name] += n
            elif isinstance(value, dict):
                for kind, inner in value.items():
                    if kind in COUNTED_KINDS and (n := _limit(inner)) is not None:
                        found[kind] += n
        for kind, n in found.items():
            limits[kind] = min(limits.get(kind, n), n)
    return limits


def _limit(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("limit")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cost(conn: redis.Redis, keys: Keys) -> dict[str, Any]:
    summary = _json(conn.get(keys.agent_cost))
    if summary is None:
        return {"available": False, "message": "no cost data yet"}
    fields = ("today_usd", "total_usd", "daily_budget_usd", "total_budget_usd", "calls_today", "tokens_today")
    return {"available": True, **{name: summary.get(name) for name in fields}}


def governance(conn: redis.Redis, keys: Keys, directory: Path) -> dict[str, Any]:
    """The governance files (read-only, when present) and the rules injected but not yet applied."""
    files = {}
    for name in GOVERNANCE_FILES:
        path = directory / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        files[name] = text[:MAX_GOVERNANCE_CHARS]
    entries = [entry for raw in conn.lrange(keys.rule_injections, 0, 99) if (entry := _json(raw)) is not None]
    injected = [entry for entry in entries if "rule" in entry]
    requested = sorted({e["accept"] for e in entries if _whole(e.get("accept"))})
    return {
        "files": files,
        "injected_rules": injected,
        "proposals": proposals(directory) or [],
        "accept_requested": requested,  # Accept clicked; the agent applies it at its next cycle
    }


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def proposals(directory: Path) -> list[dict[str, Any]] | None:
    """The agent's rule proposals (proposals.json, read-only); None when absent or unreadable."""
    try:
        data = json.loads((directory / "proposals.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list):
        return None
    return [
        {
            "number": p["number"],
            "rule": str(p.get("rule", ""))[:2000],
            "why": str(p.get("why", ""))[:2000],
            "accepted_at": p.get("accepted_at") if isinstance(p.get("accepted_at"), int | float) else None,
        }
        for p in data
        if isinstance(p, dict) and _whole(p.get("number"))
    ]


def pending_approvals(conn: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return approvals.pending(conn, keys)
