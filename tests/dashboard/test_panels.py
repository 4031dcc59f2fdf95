"""The dashboard's readers and drawings without a browser: the charts (values readable, names
escaped), the cost ledger read incrementally, autonomy's panel from its files, the approvals page
and the audit copy, and the live stream's one shared poller."""

from __future__ import annotations

import asyncio
import json
import time
import xml.etree.ElementTree as ET

import pytest
import redis

from dashboard import charts, live
from dashboard.approvals_view import pending_page
from dashboard.audit_mirror import AuditMirror
from dashboard.workspace_reads import CostHistory, autonomy_panel
from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.policy.approval_store import ApprovalStore

KEYS = Keys()
SVG = "{http://www.w3.org/2000/svg}"
NOW = 1_764_115_200.0  # 2025-11-26 00:00 UTC


def texts(svg: str, **attrs: str) -> list[str]:
    root = ET.fromstring(svg)
    return [
        node.text or ""
        for node in root.iter(f"{SVG}text")
        if all(node.get(k.replace("_", "-")) == v for k, v in attrs.items())
    ]


def test_actions_chart_totals_per_day_and_platform_are_labels():
    hour = int(NOW + 10 * 3600) // 3600 * 3600
    hourly = {(hour, "bsky"): 3, (hour - 86400, "bsky"): 2, (hour, "<script>alert(1)</script>"): 1}
    svg = charts.actions_per_hour(hourly, NOW + 12 * 3600)
    root = ET.fromstring(svg)  # well-formed: the odd platform name is text, not markup
    assert not list(root.iter(f"{SVG}script"))
    legend = sorted(texts(svg, **{"class": "legend"}))
    assert legend == ["<script>alert(1)</script>: 1", "Bluesky: 5"]
    assert texts(svg, data_day="2025-11-26") == ["4"] and texts(svg, data_day="2025-11-25") == ["2"]
    assert root.find(f"{SVG}title").text == "Actions per hour, last 7 days"


def test_cost_chart_labels_each_day_and_the_budget():
    days = {"2025-11-25": 0.25, "2025-11-26": 1.5}
    svg = charts.cost_per_day(days, 1.0, NOW + 3600)
    assert texts(svg, data_day="2025-11-25") == ["$0.25"] and texts(svg, data_day="2025-11-26") == ["$1.50"]
    assert "daily budget $1.00" in texts(svg, **{"class": "value budget-label"})
    over = [
        r
        for r in ET.fromstring(svg).iter(f"{SVG}rect")
        if r.find(f"{SVG}title").text.startswith("2025-11-26")
    ]
    assert over[0].get("fill") == "#b91c1c"  # over the budget: red


def test_quota_chart_is_one_bar_per_platform_and_kind_never_a_sum():
    quotas = {
        "bsky": {"post": {"used": 2, "limit": 10}},
        "x": {"post": {"used": 5, "limit": 5}, "read": {"used": 1, "limit": 9}},
    }
    svg = charts.quota_use(quotas)
    assert texts(svg, data_row="bsky:post") == ["2 of 10"] and texts(svg, data_row="x:post") == ["5 of 5"]
    assert texts(svg, data_row="x:read") == []


def test_the_cost_ledger_is_read_incrementally_and_again_when_replaced(tmp_path):
    path = tmp_path / "cost.jsonl"
    history = CostHistory(path)
    assert history.per_day() == {}
    path.write_text(
        json.dumps({"ts": NOW, "usd": 0.5}) + "\n" + json.dumps({"ts": NOW, "usd": "x"}) + "\nnot json\n"
    )
    assert history.per_day() == {"2025-11-26": 0.5}
    with path.open("a") as ledger:
        ledger.write(json.dumps({"ts": NOW + 86400, "usd": 0.25}) + "\n" + '{"ts": 1764115200, "usd": 1')
    assert history.per_day() == {"2025-11-26": 0.5, "2025-11-27": 0.25}  # the torn line waits
    with path.open("a") as ledger:
        ledger.write("}\n")
    assert history.per_day()["2025-11-26"] == 1.5
    replaced = tmp_path / "new.jsonl"
    replaced.write_text(json.dumps({"ts": NOW, "usd": 0.1}) + "\n")
    replaced.replace(path)
    assert history.per_day() == {"2025-11-26": 0.1}


def test_autonomy_panel_reads_enabled_pause_and_last_cycles(tmp_path):
    workspace, config = tmp_path / "workspace", tmp_path / "config.json"
    (workspace / "autonomy").mkdir(parents=True)
    (workspace / "logs").mkdir()
    config.write_text(json.dumps({"channels": {"autonomy": {"enabled": True, "cycle_interval": 600}}}))
    pause = {"reason": "budget", "since": NOW, "until": NOW + 7200, "detail": "$2.00 spent"}
    (workspace / "autonomy" / "state.json").write_text(
        json.dumps({"cycle_count": 3, "last_cycle_at": NOW, "pause": pause})
    )
    lines = [
        {"ts": NOW - 1200, "cycle": 1, "outcome": "acted", "new_items": 4, "public": [{"a": 1}], "usd": 0.01},
        "garbage",
        {"ts": NOW - 600, "cycle": 2, "outcome": "rested", "public": "not a list"},
        {"ts": NOW, "cycle": 3, "outcome": "paused:budget", "detail": "spent"},
    ]
    (workspace / "logs" / "activity.jsonl").write_text(
        "\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n"
    )
    panel = autonomy_panel(workspace, config, NOW)
    assert panel["enabled"] is True and panel["cycle_count"] == 3
    assert panel["last"]["words"] == "paused: the LLM budget is spent"
    assert panel["paused"]["until"] == NOW + 7200 and panel["next_at"] == NOW + 7200
    assert [c["cycle"] for c in panel["cycles"]] == [3, 2, 1]
    assert panel["cycles"][2]["details"].startswith("4 new item(s) read, 1 public action(s)")
    assert autonomy_panel(tmp_path / "none", tmp_path / "none.json", NOW)["enabled"] is None


def test_the_approvals_page_is_two_round_trips_and_pages_without_repeats(redis_urls):
    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", 3600)
    for i in range(120):
        conversation = f"telegram:{i % 5}"  # at most 50 wait from one conversation (router cap)
        envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": f"t{i}"}, conversation, 60)
        store.request(envelope, {"platform": "bsky", "kind": "post", "target": None}, f"t{i}")
    control = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    executes = []
    real = redis.client.Pipeline.execute

    def counting(self, *args, **kwargs):
        executes.append(len(self.command_stack))
        return real(self, *args, **kwargs)

    seen = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redis.client.Pipeline, "execute", counting)
        for offset in (0, 50, 100):
            page = pending_page(control, KEYS, offset)
            assert page["total"] == 120
            seen += [a["text"] for a in page["approvals"]]
    assert len(executes) == 6 and sorted(seen) == sorted(f"t{i}" for i in range(120))
    assert page["approvals"][0]["title"] == "Post on Bluesky"
    assert page["approvals"][0]["origin_words"].startswith("from Telegram (chat ")


def test_the_audit_copy_starts_over_when_the_stream_begins_again(redis_urls):
    admin = redis_urls.admin_client()
    control = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    mirror = AuditMirror(control, KEYS)
    line = {"ts": time.time(), "status": "ok", "effect": {"platform": "bsky", "kind": "post"}}
    admin.xadd(KEYS.audit_stream, {"line": json.dumps(line)}, id="9999999999999-0")
    assert len(mirror.sync()) == 1
    admin.delete(KEYS.audit_stream)
    admin.xadd(KEYS.audit_stream, {"line": json.dumps({**line, "text": "again"})}, id="5-0")
    mirror.sync()
    assert [item["text"] for _, item in mirror.items] == ["again"]


def test_every_open_page_shares_one_poller():
    calls = []

    def look(last_sent):
        calls.append(1)
        return [live.event("status", {"n": len(calls)})]

    async def scenario():
        hub = live.LiveHub(look)
        queues = [hub.subscribe() for _ in range(10)]
        got = [[await q.get() for _ in range(3)] for q in queues]
        for q in queues:
            hub.unsubscribe(q)
        return got

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(live, "TICK_SECONDS", 0.01)
        got = asyncio.run(scenario())
    assert all(g == got[0] for g in got)  # each page got the same events, in order
    assert len(calls) <= 4  # one look per tick for all ten pages, not one per page


def test_the_live_poller_says_redis_is_down_once_not_every_second(tmp_path, caplog):
    from dashboard.app import Dashboard
    from dashboard.settings import DashboardSettings
    from scripts.stack_redis import free_port
    from tests.dashboard.helpers import TOKEN

    dead = f"redis://control:x@127.0.0.1:{free_port()}/0"
    board = Dashboard(DashboardSettings.from_env({"REDIS_URL": dead, "DASHBOARD_TOKEN": TOKEN}))
    last_sent: dict[str, str] = {}
    first = board.look(last_sent)
    assert len(first) == 1 and first[0].startswith("event: status") and '"level": "red"' in first[0]
    assert board.look(last_sent) == [] and board.look(last_sent) == []
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
