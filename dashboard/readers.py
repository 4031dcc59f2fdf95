"""The smaller reads of the dashboard: heartbeats, today's quotas, the LLM cost summary, the
governance files and rule proposals. Each returns plain JSON-ready data in one round trip and
writes nothing; the state band is `dashboard.state`, the activity `dashboard.audit_mirror`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import redis

from dashboard.values import agent_value, all_read, json_object, number, read_agent_key, text, texts, whole
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.keys import Keys
from protocol.llm_cost import FREE_WORDS, is_free

GOVERNANCE_FILES = ("DOS.md", "VIOLATIONS.md", "UNKNOWNS.md", "PROPOSED_RULES.md", "external_overrides.md")
MAX_GOVERNANCE_CHARS = 100_000


_json = json_object


def heartbeats(conn: redis.Redis, keys: Keys, router_keys: list[str], now: float) -> dict[str, Any]:
    """The agent's and every router's last heartbeat as written (only objects with a number `ts`),
    each with its `age` in seconds and `alive` by the one rule of protocol.heartbeat."""
    pipe = conn.pipeline(transaction=False)
    read_agent_key(pipe, keys.agent_heartbeat)
    for key in router_keys:
        pipe.get(key)
    found: list[Any] = all_read(pipe.execute(raise_on_error=False), (0,))
    found[0] = agent_value(found[0])
    beats = [read_heartbeat(raw) for raw in found]
    for beat in beats:
        if beat is not None:
            beat["age"] = round(now - float(beat["ts"]), 1)
            beat["alive"] = is_alive(beat, now)
    return {"agent": beats[0], "routers": [b for b in beats[1:] if b is not None], "ts": now}


def quotas(routers: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """Today's use per platform and kind, {platform: {kind: {used, limit}}}, as the live routers
    count it (they share the counters; the freshest heartbeat wins). Never a sum over platforms."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for beat in sorted((b for b in routers if b.get("alive")), key=lambda b: float(b["ts"])):
        table = beat.get("quotas")
        if not isinstance(table, dict):
            continue
        for platform, kinds in list(table.items())[:20]:
            if not isinstance(kinds, dict):
                continue
            for kind, entry in list(kinds.items())[:10]:
                if not isinstance(entry, dict):
                    continue
                used, limit = whole(entry.get("used")), whole(entry.get("limit"))
                if used is not None and limit is not None and used >= 0 and limit >= 0:
                    found.setdefault(text(platform, 40), {})[text(kind, 20)] = {"used": used, "limit": limit}
    return found


def stats(conn: redis.Redis, keys: Keys, router_keys: list[str], now: float) -> dict[str, Any]:
    """Today's (UTC) use of each platform's daily quotas, one platform at a time; `dry_run` when the
    freshest live router rehearses (its counts are the rehearsal's own, never the real quotas)."""
    day = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    routers = heartbeats(conn, keys, router_keys, now)["routers"]
    live = sorted((b for b in routers if b.get("alive")), key=lambda b: float(b["ts"]))
    dry_run = bool(live) and live[-1].get("dry_run") is True
    return {"day": day, "platforms": quotas(routers), "dry_run": dry_run}


def cost(conn: redis.Redis, keys: Keys) -> dict[str, Any]:
    pipe = conn.pipeline(transaction=False)
    read_agent_key(pipe, keys.agent_cost)
    read_agent_key(pipe, keys.agent_heartbeat)
    raw_summary, raw_beat = (agent_value(value) for value in pipe.execute(raise_on_error=False))
    summary, beat = _json(raw_summary), read_heartbeat(raw_beat)
    if beat is not None and is_free(beat.get("llm_provider")):
        return {"available": True, "free": True, "message": f"No money budget: {FREE_WORDS}.",
                "calls_today": whole((summary or {}).get("calls_today")),
                "tokens_today": whole((summary or {}).get("tokens_today"))}
    if summary is None:
        return {"available": False, "message": "no LLM cost recorded yet"}
    money = ("today_usd", "total_usd", "daily_budget_usd", "total_budget_usd", "outside_today_usd",
             "outside_budget_usd")
    counts = ("calls_today", "tokens_today")
    return {
        "available": True,
        "free": False,
        **{name: number(summary.get(name)) for name in money},
        **{name: whole(summary.get(name)) for name in counts},
        "outside_spent": texts(summary.get("outside_spent"), 100, 20),
    }


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
            "sources": [str(s)[:300] for s in p.get("sources", []) if isinstance(s, str)][:4]
            if isinstance(p.get("sources"), list) else [],
            "accepted_at": p.get("accepted_at") if isinstance(p.get("accepted_at"), int | float) else None,
        }
        for p in data
        if isinstance(p, dict) and _whole(p.get("number"))
    ]
