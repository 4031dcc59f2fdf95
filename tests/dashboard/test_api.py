"""The dashboard's API against a real redis-server, logged in as the control user."""

from __future__ import annotations

import json
import logging
import re
import time

import pytest
import redis
from starlette.testclient import TestClient

from dashboard.app import create_app
from dashboard.settings import ConfigError, DashboardSettings
from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.policy.approval_store import ApprovalStore
from tests.dashboard.helpers import BASE, TOKEN, audit_line

KEYS = Keys()


@pytest.fixture
def settings(redis_urls, tmp_path):
    return DashboardSettings.from_env(
        {
            "REDIS_URL": redis_urls.control_url,
            "DASHBOARD_TOKEN": TOKEN,
            "DASHBOARD_GOVERNANCE_DIR": str(tmp_path / "gov"),
            "DASHBOARD_AUDIT_DIR": str(tmp_path / "audit"),
        }
    )


@pytest.fixture
def api(settings):
    with TestClient(create_app(settings), base_url=BASE) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        client.headers["Content-Type"] = "application/json"
        yield client


@pytest.fixture
def anon(settings):
    with TestClient(create_app(settings), base_url=BASE) as client:
        yield client


READS = [
    "/api/status",
    "/api/heartbeat",
    "/api/activity?limit=5",
    "/api/stats",
    "/api/cost",
    "/api/governance",
    "/api/approvals",
    "/api/stream",
]
WRITES = [
    ("/api/kill", {"on": True}),
    ("/api/inject-rule", {"rule": "be kind", "why": "x"}),
    ("/api/proposals/1/accept", {}),
    ("/api/approvals/" + "a" * 32 + "/approve", {}),
    ("/api/approvals/" + "a" * 32 + "/deny", {}),
]


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer wrong-token-123456789",
        f"Bearer {TOKEN}x",
        f"Basic {TOKEN}",
        f"Bearer {TOKEN[:-1]}",
        "Bearer ",
    ],
)
def test_reads_need_the_token(anon, path, header, caplog):
    headers = {"Authorization": header} if header is not None else {}
    with caplog.at_level(logging.WARNING, logger="safeclaw.dashboard"):
        response = anon.get(path, headers=headers)
    assert response.status_code == 401
    assert any("401 for GET" in r.getMessage() for r in caplog.records)
    assert TOKEN not in caplog.text and TOKEN[:-1] not in caplog.text


@pytest.mark.parametrize(("path", "body"), WRITES)
def test_writes_need_the_token_even_with_public_read(redis_urls, tmp_path, path, body, caplog):
    open_settings = DashboardSettings.from_env(
        {"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": TOKEN, "DASHBOARD_PUBLIC_READ": "true"}
    )
    admin = redis_urls.admin_client()
    with TestClient(create_app(open_settings), base_url=BASE) as client:
        assert client.get("/api/status").status_code == 200  # public read opens GET...
        with caplog.at_level(logging.WARNING, logger="safeclaw.dashboard"):
            assert client.post(path, json=body).status_code == 401  # ...and nothing else
    assert admin.get(KEYS.kill_switch) is None and admin.llen(KEYS.rule_injections) == 0
    assert "401 for POST" in caplog.text


def test_no_cookie_no_cors_and_security_headers(api):
    response = api.get("/api/status", headers={"Origin": "https://evil.example"})
    assert "set-cookie" not in response.headers
    assert "access-control-allow-origin" not in response.headers
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    preflight = api.options(
        "/api/kill", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_the_page_has_no_inline_script_or_style_and_the_policy_allows_none(anon):
    from dashboard.settings import DASHBOARD_DIR

    policy = anon.get("/").headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe" not in policy and "data:" not in directives["script-src"]
    for path in (DASHBOARD_DIR / "static").iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), f"inline script in {path.name}"
        assert not re.search(r"<style|\sstyle=|\son[a-z]+=", text), f"inline style or handler in {path.name}"
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text
        assert anon.get(f"/static/{path.name}").headers["content-security-policy"] == policy


def parts(body) -> dict[str, dict]:
    return {p["part"]: p for p in body["parts"]}


def test_status_without_agent_or_router_says_so_in_words(api):
    body = api.get("/api/status").json()
    shown = parts(body)
    assert shown["redis"]["state"] == "ok" and "Redis answers" in shown["redis"]["words"]
    assert shown["agent"]["state"] == "off" and "not running" in shown["agent"]["words"]
    assert shown["routers"]["state"] == "bad" and "start it with ./safeclaw" in shown["routers"]["fix"]
    assert body["kill_switch"]["on"] is False and body["level"] == "red"


def test_router_liveness_follows_the_one_heartbeat_rule(api, redis_urls):
    """protocol.heartbeat: alive while no older than twice the ttl the router wrote (15 s by default)."""
    admin = redis_urls.admin_client()
    now = time.time()
    admin.set(
        KEYS.agent_heartbeat,
        json.dumps(
            {
                "ts": now,
                "llm_provider": "ollama",
                "llm_model": "m",
                "llm": {"ok": True},
                "channels": ["console"],
            }
        ),
    )
    beat = {"skills": ["PING"], "platforms_with_credentials": ["bsky"]}
    admin.set(KEYS.router_heartbeat("fresh"), json.dumps({**beat, "router_id": "fresh", "ts": now}))
    admin.set(KEYS.router_heartbeat("slow"), json.dumps({**beat, "router_id": "slow", "ts": now - 25}))
    admin.set(
        KEYS.router_heartbeat("long"),
        json.dumps({**beat, "router_id": "long", "ts": now - 100, "ttl": 60, "new_account": ["moltbook"]}),
    )
    admin.set(KEYS.router_heartbeat("stuck"), json.dumps({**beat, "router_id": "stuck", "ts": now - 31}))
    shown = parts(api.get("/api/status").json())
    states = {name: shown[f"router:{name}"]["state"] for name in ("fresh", "slow", "long", "stuck")}
    assert states == {"fresh": "ok", "slow": "ok", "long": "ok", "stuck": "bad"}
    assert "may have crashed" in shown["router:stuck"]["words"]
    assert "connected to bsky" in shown["router:fresh"]["words"]
    assert "new-account limits on moltbook" in shown["router:long"]["words"]
    assert shown["agent"]["state"] == "ok" and shown["llm"]["state"] == "ok"


def test_a_fresh_install_without_credentials_reads_as_setup_not_errors(api, redis_urls):
    admin = redis_urls.admin_client()
    now = time.time()
    admin.set(KEYS.router_heartbeat("r1"), json.dumps({"router_id": "r1", "ts": now, "skills": ["PING"]}))
    admin.set(
        KEYS.agent_heartbeat, json.dumps({"ts": now, "llm_provider": "ollama", "channels": ["console"]})
    )
    body = api.get("/api/status").json()
    assert body["level"] == "setup" and body["setup"]["needed"]
    assert body["headline"].startswith("Set up: no platform connected yet")
    assert not [p for p in body["parts"] if p["state"] == "bad"]


def test_the_kill_switch_turns_the_band_red_and_says_who_and_since_when(api, redis_urls):
    api.post("/api/kill", json={"on": True})
    body = api.get("/api/status").json()
    assert body["level"] == "red" and body["kill_switch"]["liftable"]
    assert body["headline"] == "Posting is stopped"
    assert (
        "kill switch is on: every post, reply, like and delete is refused. Turned on by you, from the dashboard"
        in (body["kill_switch"]["words"])
    )
    assert abs(body["kill_switch"]["since"] - time.time()) < 60


def test_a_kill_switch_held_by_a_routers_settings_has_no_button_but_a_fix(settings, redis_urls):
    redis_urls.admin_client().set(
        KEYS.router_heartbeat("r1"),
        json.dumps({"router_id": "r1", "ts": time.time(), "kill_switch_floor": True, "dry_run": True}),
    )
    with TestClient(create_app(settings), base_url=BASE) as client:
        body = client.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert body["level"] == "red" and body["kill_switch"]["on"] and not body["kill_switch"]["liftable"]
    assert "ROUTER_KILL_SWITCH=false" in body["kill_switch"]["fix"]


def test_dry_run_turns_the_band_amber(api, redis_urls):
    redis_urls.admin_client().set(
        KEYS.router_heartbeat("r1"),
        json.dumps(
            {"router_id": "r1", "ts": time.time(), "dry_run": True, "platforms_with_credentials": ["x"]}
        ),
    )
    body = api.get("/api/status").json()
    assert body["level"] == "amber"
    assert body["headline"] == "Dry run: nothing is sent; posts go to router/outbox.jsonl"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (KEYS.agent_heartbeat, '{"ts": "soon"}'),
        (KEYS.agent_heartbeat, '{"ts": 1e999, "llm": "x", "channels": 5}'),
        (KEYS.agent_heartbeat, "[" * 100_000),
        (KEYS.agent_heartbeat, '{"ts": ' + "9" * 5000 + "}"),
        (KEYS.agent_autonomy, '{"timestamp": "soon", "cycle_count": "x"}'),
        (
            KEYS.agent_autonomy,
            '{"timestamp": 1, "action_started_at": 1, "cycle_count": 1, "cycle_interval": 0}',
        ),
        (KEYS.agent_cost, '{"today_usd": "lots", "daily_budget_usd": [1]}'),
        (KEYS.agent_cost, "not json"),
    ],
)
def test_what_the_agent_login_writes_never_hides_another_part(api, redis_urls, key, value):
    """Issue 18 item 14: the agent's own keys may hold anything; its line says so, the rest stands."""
    admin = redis_urls.admin_client()
    admin.set(KEYS.router_heartbeat("r1"), json.dumps({"router_id": "r1", "ts": time.time()}))
    held, _ = _hold(redis_urls)
    agent = redis.Redis.from_url(redis_urls.agent_url, decode_responses=True)
    agent.set(key, value)  # written with the agent's own login, as an attacker holding it would
    response = api.get("/api/status")
    assert response.status_code == 200
    body = response.json()
    assert body["pending_approvals"] == 1 and parts(body)["router:r1"]["state"] == "ok"
    assert parts(body)["redis"]["state"] == "ok"
    assert api.get("/api/approvals").json()["approvals"][0]["id"] == held
    assert api.get("/api/cost").status_code == api.get("/api/heartbeat").status_code == 200


def _hold(redis_urls, text="hello", conversation="telegram:1"):
    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", 3600)
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, conversation, 60)
    effect = {"platform": "bsky", "kind": "post", "text": text, "target": None}
    return store.request(envelope, effect, text).approval_id, envelope


def test_activity_reads_in_words_with_filters_and_paging(api, redis_urls):
    admin = redis_urls.admin_client()
    lines = [
        ("post", "ok", "bsky", "console", "hello world"),
        ("post", "denied", "mastodon", "telegram", "no"),
        ("reply", "ok", "bsky", "autonomy", "thanks"),
        ("like", "ok", "x", "console", ""),
    ]
    for kind, status, platform, origin, text in lines * 30:
        admin.xadd(KEYS.audit_stream, {"line": audit_line(kind, status, text, platform, origin)})
    first = api.get("/api/activity?limit=3").json()
    assert [a["sentence"] for a in first["activity"]] == [
        "Liked a post on X",
        "Replied on Bluesky",
        "Refused to post on Mastodon",
    ]
    assert first["activity"][1]["origin_words"] == "by autonomy"
    assert first["activity"][2]["decision"] == "refused: the kill switch was on"
    seen, cursor = [], None
    while True:  # page back through every line
        page = api.get("/api/activity", params={"limit": 7, **({"before": cursor} if cursor else {})}).json()
        seen += page["activity"]
        cursor = page["older"]
        if cursor is None:
            break
    assert len(seen) == 120 and len({a["id"] for a in seen}) == 120
    posted = api.get("/api/activity", params={"platform": "bsky", "kind": "post", "outcome": "done"}).json()
    assert len(posted["activity"]) == 30
    assert {a["sentence"] for a in posted["activity"]} == {"Posted on Bluesky"}
    by_telegram = api.get("/api/activity", params={"origin": "telegram"}).json()["activity"]
    assert {a["origin_words"] for a in by_telegram} == {"from Telegram (chat 1)"}
    found = api.get("/api/activity", params={"q": "HELLO world", "limit": 1000}).json()["activity"]
    assert len(found) == 30 and all(a["text"] == "hello world" for a in found)


def test_paging_goes_on_past_the_stream_into_the_routers_audit_files(api, redis_urls, tmp_path):
    """The stream holds the last lines; the routers' files hold every line (rotated ones too)."""
    from router.audit.log import AuditLog

    now = time.time()
    for router_id, offset in (("r1", 0.0), ("r2", 0.5)):
        log = AuditLog(tmp_path / "audit", router_id, max_bytes=4000, sync_seconds=None)
        for i in range(40):
            record = json.loads(audit_line("post", "ok", f"{router_id} old {i}", "bsky"))
            log.append({**record, "router": router_id, "ts": now - 10_000 + i * 10 + offset})
        log.close()
    assert len(list((tmp_path / "audit").glob("r1.*.jsonl"))) >= 2  # rotated: a chain of files
    admin = redis_urls.admin_client()
    for i in range(30):
        admin.xadd(KEYS.audit_stream, {"line": audit_line("like", "ok", f"new {i}", "x")})
    seen, cursor = [], None
    while True:
        params = {"limit": 25, **({"before": cursor} if cursor else {})}
        page = api.get("/api/activity", params=params).json()
        assert page["files"] is True
        seen += page["activity"]
        cursor = page["older"]
        if cursor is None:
            break
    texts = [a["text"] for a in seen]
    assert len(texts) == 110 and len(set(texts)) == 110
    assert texts[:30] == [f"new {i}" for i in reversed(range(30))]
    assert texts[30:32] == ["r2 old 39", "r1 old 39"] and texts[-1] == "r1 old 0"  # merged by time
    found = api.get("/api/activity", params={"q": "r2 old 7", "before": "t" + repr(now)}).json()["activity"]
    assert [a["text"] for a in found] == ["r2 old 37", "r2 old 27", "r2 old 17", "r2 old 7"]


def test_dry_run_lines_are_marked(api, redis_urls):
    line = json.loads(audit_line("post", "ok", "hi"))
    redis_urls.admin_client().xadd(KEYS.audit_stream, {"line": json.dumps({**line, "dry_run": True})})
    shown = api.get("/api/activity").json()["activity"][0]
    assert shown["dry_run"] and shown["sentence"] == "Would post on Bluesky (dry run: nothing was sent)"


def test_quotas_are_per_platform_never_a_sum(api, redis_urls):
    quotas = {"bsky": {"post": {"limit": 10, "used": 2}}, "mastodon": {"post": {"limit": 15, "used": 0}}}
    redis_urls.admin_client().set(
        KEYS.router_heartbeat("r1"), json.dumps({"router_id": "r1", "ts": time.time(), "quotas": quotas})
    )
    assert api.get("/api/stats").json()["platforms"] == quotas


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "5000", "1e3"])
def test_bad_activity_limit_is_400(api, limit):
    response = api.get(f"/api/activity?limit={limit}")
    assert response.status_code == 400 and "limit" in response.json()["message"]


def autonomy_beat(age: float, action: str = "idle", running: float = 0.0, paused: str = "") -> str:
    now = time.time()
    return json.dumps(
        {
            "timestamp": now - age,
            "current_action": action,
            "action_started_at": now - running,
            "cycle_count": 42,
            "last_cycle_at": now - age,
            "cycle_interval": 60,
            "pid": 1,
            "stuck": False,
            "stuck_reason": "",
            "paused": paused,
        }
    )


def test_autonomy_is_judged_stuck_by_the_dashboards_own_clock(api, redis_urls):
    admin = redis_urls.admin_client()

    def autonomy():
        return parts(api.get("/api/status").json())["autonomy"]

    assert autonomy()["state"] == "off"
    admin.set(KEYS.agent_autonomy, autonomy_beat(age=5))
    assert autonomy()["state"] == "ok" and "cycle 42" in autonomy()["words"]
    admin.set(KEYS.agent_autonomy, autonomy_beat(age=5, paused="budget"))
    assert autonomy()["state"] == "warn" and "paused (budget)" in autonomy()["words"]
    admin.set(KEYS.agent_autonomy, autonomy_beat(age=181))  # the agent wrote "not stuck", then died
    shown = autonomy()
    assert shown["state"] == "bad" and "no heartbeat for 18" in shown["words"]
    admin.set(KEYS.agent_autonomy, autonomy_beat(age=5, action="turn", running=601))
    assert "'turn' has run for 601s" in autonomy()["words"]


def test_cost_absent_then_present(api, redis_urls):
    assert api.get("/api/cost").json() == {"available": False, "message": "no LLM cost recorded yet"}
    redis_urls.admin_client().set(
        KEYS.agent_cost,
        json.dumps(
            {
                "today_usd": 0.5,
                "total_usd": 3.0,
                "daily_budget_usd": 1.0,
                "total_budget_usd": 50,
                "calls_today": 7,
                "tokens_today": 900,
            }
        ),
    )
    cost = api.get("/api/cost").json()
    assert cost["available"] and cost["today_usd"] == 0.5 and cost["tokens_today"] == 900


def test_the_cost_panel_names_the_outside_shares_that_are_spent(api, redis_urls):
    redis_urls.admin_client().set(KEYS.agent_cost, json.dumps({
        "today_usd": 0.6, "daily_budget_usd": 2.0, "outside_today_usd": 0.5, "outside_budget_usd": 0.5,
        "outside_spent": ["all words from outside", "mallory.test", 7, "x" * 500],
    }))
    cost = api.get("/api/cost").json()
    assert cost["outside_today_usd"] == 0.5 and cost["outside_budget_usd"] == 0.5
    assert cost["outside_spent"] == ["all words from outside", "mallory.test", "x" * 100]


def test_governance_files_and_rule_injection(api, tmp_path, redis_urls):
    (tmp_path / "gov").mkdir()
    (tmp_path / "gov" / "DOS.md").write_text("- never post at night\n")
    (tmp_path / "gov" / "secrets.txt").write_text("not a governance file")
    response = api.post("/api/inject-rule", json={"rule": "  no politics ", "why": "owner's choice"})
    assert response.status_code == 200
    gov = api.get("/api/governance").json()
    assert gov["files"] == {"DOS.md": "- never post at night\n"}
    assert gov["injected_rules"][0]["rule"] == "no politics"
    assert gov["injected_rules"][0]["author"] == "owner (dashboard)"


def test_accepting_a_proposal_queues_it_for_the_agent_and_never_writes_the_workspace(
    api, anon, tmp_path, redis_urls
):
    from agent.governance.files import Governance

    (tmp_path / "gov").mkdir()  # the dashboard's DASHBOARD_GOVERNANCE_DIR: the workspace's folder
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "governance").symlink_to(tmp_path / "gov", target_is_directory=True)
    governance = Governance(tmp_path / "ws")
    governance.propose("Never post about politics", "owner asked", "autonomy")
    before = {p.name: p.read_bytes() for p in governance.dir.iterdir()}
    assert anon.post("/api/proposals/1/accept").status_code == 401
    assert (
        api.post("/api/proposals/9/accept").json()["message"] == "there is no proposal #9; open proposals: 1"
    )
    for bad in ("0", "-1", "1.5", "x", "99999999999"):
        assert api.post(f"/api/proposals/{bad}/accept").status_code in (400, 404)
    assert redis_urls.admin_client().llen(KEYS.rule_injections) == 0
    response = api.post("/api/proposals/1/accept")
    assert response.status_code == 202, response.text
    queued = [json.loads(x) for x in redis_urls.admin_client().lrange(KEYS.rule_injections, 0, -1)]
    assert [(q["accept"], q["author"]) for q in queued] == [(1, "owner (dashboard)")]
    assert {p.name: p.read_bytes() for p in governance.dir.iterdir()} == before  # the agent writes it
    gov = api.get("/api/governance").json()
    assert gov["accept_requested"] == [1] and gov["injected_rules"] == []
    assert gov["proposals"][0]["rule"] == "Never post about politics"
    governance.accept(1)
    assert api.post("/api/proposals/1/accept").status_code == 409


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"rule": ""}',
        b'{"rule": 5}',
        b'{"why": "x"}',
        b'{"rule": "' + b"x" * 2001 + b'"}',
        b'{"rule": "a", "why": 3}',
    ],
)
def test_bad_rule_bodies_are_400_and_store_nothing(api, body, redis_urls):
    response = api.post("/api/inject-rule", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["message"]
    assert redis_urls.admin_client().llen(KEYS.rule_injections) == 0


def test_oversized_body_is_413(api):
    response = api.post("/api/inject-rule", content=b'{"rule": "' + b"x" * 20000 + b'"}')
    assert response.status_code == 413


@pytest.mark.parametrize("body", [{}, {"on": "true"}, {"on": 1}, {"on": None}])
def test_kill_needs_a_boolean(api, body, redis_urls):
    assert api.post("/api/kill", json=body).status_code == 400
    assert redis_urls.admin_client().get(KEYS.kill_switch) is None


def test_kill_switch_on_and_off(api, redis_urls):
    assert api.post("/api/kill", json={"on": True}).json()["kill_switch"]["on"] is True
    assert api.get("/api/status").json()["kill_switch"]["on"] is True
    assert api.post("/api/kill", json={"on": False}).status_code == 200
    assert api.get("/api/status").json()["kill_switch"]["on"] is False


def _request_approval(redis_urls, text="hello world", ttl=3600):
    router = __import__("redis").Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", ttl)
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, "telegram:1", 60)
    return store.request(envelope, {"platform": "bsky", "kind": "post", "text": text, "target": None}, text)


def test_approvals_list_approve_once_then_conflict(api, redis_urls):
    request = _request_approval(redis_urls)
    listed = api.get("/api/approvals").json()["approvals"]
    assert [a["id"] for a in listed] == [request.approval_id]
    assert listed[0]["platform"] == "bsky" and listed[0]["text"] == "hello world"
    assert "owner_code_sha256" not in listed[0] and "command" not in listed[0]
    first = api.post(f"/api/approvals/{request.approval_id}/approve")
    assert first.status_code == 200
    second = api.post(f"/api/approvals/{request.approval_id}/deny")
    assert second.status_code == 409 and "already decided" in second.json()["message"]
    admin = redis_urls.admin_client()
    assert admin.lrange(KEYS.approvals_decided, 0, -1) == [request.approval_id]
    assert json.loads(admin.get(KEYS.approval_decision(request.approval_id)))["decision"] == "approve"
    # Until a router acts on it, the list says it is decided (and by whom) instead of offering it again.
    assert listed[0]["decision"] is None
    again = api.get("/api/approvals").json()["approvals"][0]
    assert again["decision"] == {"decision": "approve", "by": "dashboard"}


@pytest.mark.parametrize("approval_id", ["nope", "a" * 32, "../../etc", "A" * 32])
def test_unknown_approval_is_409(api, approval_id):
    response = api.post(f"/api/approvals/{approval_id}/approve")
    assert response.status_code in (404, 409)


def test_settings_refuse_agent_or_router_user_and_short_token(redis_urls):
    with pytest.raises(ConfigError, match="control user"):
        DashboardSettings.from_env({"REDIS_URL": redis_urls.agent_url, "DASHBOARD_TOKEN": TOKEN})
    with pytest.raises(ConfigError, match="DASHBOARD_TOKEN"):
        DashboardSettings.from_env({"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": "short"})
    with pytest.raises(ConfigError, match="DASHBOARD_PUBLIC_READ"):
        DashboardSettings.from_env(
            {"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": TOKEN, "DASHBOARD_PUBLIC_READ": "maybe"}
        )


def test_page_is_served_without_data(anon):
    page = anon.get("/")
    assert page.status_code == 200 and "SafeClaw dashboard" in page.text
    assert anon.get("/static/main.js").status_code == 200
    assert anon.get("/static/../settings.py").status_code == 404


def test_a_token_guesser_is_slowed_to_a_stop(anon, caplog):
    from dashboard.throttle import MAX_FAILURES

    for i in range(MAX_FAILURES):
        assert anon.get("/api/status", headers={"Authorization": f"Bearer guess-{i:020d}"}).status_code == 401
    blocked = anon.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0  # even the right token
    assert anon.post("/api/kill", json={"on": True}).status_code == 429


def test_failed_logins_window_and_memory_are_bounded():
    from dashboard import throttle

    now = [0.0]
    logins = throttle.FailedLogins(lambda: now[0])
    for _ in range(throttle.MAX_FAILURES):
        logins.failed("1.2.3.4")
    assert logins.blocked("1.2.3.4") > 0 and logins.blocked("5.6.7.8") == 0
    now[0] += throttle.WINDOW_SECONDS + 1
    assert logins.blocked("1.2.3.4") == 0
    for i in range(throttle.MAX_CLIENTS + 50):
        logins.failed(f"10.0.{i // 256}.{i % 256}")
    assert len(logins._seen) == throttle.MAX_CLIENTS


def test_redis_down_is_a_red_band_that_says_so_and_reads_are_503(tmp_path):
    from scripts.stack_redis import free_port

    dead = f"redis://control:x@127.0.0.1:{free_port()}/0"
    settings = DashboardSettings.from_env(
        {"REDIS_URL": dead, "DASHBOARD_TOKEN": TOKEN, "DASHBOARD_AUDIT_DIR": str(tmp_path / "audit")}
    )
    with TestClient(create_app(settings), base_url=BASE) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        body = client.get("/api/status").json()
        assert body["level"] == "red" and body["kill_switch"] is None
        assert "Redis does not answer" in body["headline"]
        assert "start it (./safeclaw starts it)" in parts(body)["redis"]["fix"]
        for path in ("/api/approvals", "/api/activity", "/api/charts"):
            response = client.get(path)
            assert response.status_code == 503 and response.json()["error"] == "redis_unavailable"
        assert client.get("/api/autonomy").status_code == 200  # the workspace needs no Redis


def test_a_writes_started_line_is_left_out_once_its_outcome_is_written(api, redis_urls, tmp_path):
    """Audit before effect: each write has a 'started' line before it runs, then its outcome. The
    started line says nothing more once the outcome is there; alone, it is a write that may have run."""
    admin = redis_urls.admin_client()
    base = json.loads(audit_line("post", "ok", "hello"))
    admin.xadd(KEYS.audit_stream, {"line": json.dumps({**base, "command_id": "c1", "status": "started"})})
    admin.xadd(KEYS.audit_stream, {"line": json.dumps({**base, "command_id": "c1"})})
    admin.xadd(KEYS.audit_stream, {"line": json.dumps({**base, "command_id": "c2", "status": "started"})})
    shown = [a["sentence"] for a in api.get("/api/activity").json()["activity"]]
    assert shown == ["Started to post on Bluesky (its outcome follows)", "Posted on Bluesky"]
    started = api.get("/api/activity", params={"outcome": "started"}).json()["activity"]
    assert [a["command_id"] for a in started] == ["c2", "c1"]


def test_the_llm_line_warns_near_the_daily_budget_and_says_when_it_is_spent(api, redis_urls):
    admin = redis_urls.admin_client()
    beat = {"ts": time.time(), "llm_provider": "ollama", "llm_model": "m", "llm": {"ok": True}}
    admin.set(KEYS.agent_heartbeat, json.dumps(beat))

    def llm(today: float) -> dict:
        admin.set(KEYS.agent_cost, json.dumps({"today_usd": today, "daily_budget_usd": 2.0}))
        return parts(api.get("/api/status").json())["llm"]

    assert llm(0.5)["state"] == "ok" and "$0.50 of $2.00 spent today" in llm(0.5)["words"]
    assert llm(1.7)["state"] == "warn" and "85% of today's budget is spent" in llm(1.7)["words"]
    spent = llm(2.0)
    assert spent["state"] == "bad" and "no LLM call until 00:00 UTC" in spent["words"]


def test_a_dry_run_routers_quota_counts_are_said_to_be_the_rehearsals(api, redis_urls):
    """Three dry-run posts showed as "Bluesky posts 3 of 5" under "Today's quotas", as if the
    real quota were almost spent; the rehearsal counts on counters of its own."""
    quotas = {"bsky": {"post": {"limit": 5, "used": 3}}}
    admin = redis_urls.admin_client()
    beat = {"router_id": "r1", "ts": time.time(), "quotas": quotas, "dry_run": True}
    admin.set(KEYS.router_heartbeat("r1"), json.dumps(beat))
    charts = api.get("/api/charts").json()
    assert "dry run" in charts["quota_note"].lower() and "real quotas are untouched" in charts["quota_note"]
    assert "dry runs are not counted" in charts["charts"]["actions"]  # nothing sent: nothing drawn
    admin.set(KEYS.router_heartbeat("r1"), json.dumps({**beat, "dry_run": False}))
    assert api.get("/api/charts").json()["quota_note"] == ""


def test_a_platform_not_connected_yet_reads_as_set_up_not_as_a_failure(api, redis_urls):
    """On a fresh install every read of a platform without credentials showed as a red "Failed to
    read X": the wall of errors issue 22 took out of the status band, back in the activity."""
    line = json.loads(audit_line("read", "error", "", platform="x"))
    redis_urls.admin_client().xadd(KEYS.audit_stream, {"line": json.dumps({**line, "error": "no_credentials"})})
    shown = api.get("/api/activity").json()["activity"][0]
    assert shown["sentence"] == "Could not read X: X is not connected yet (no credentials in router/.env)"
    assert shown["setup"] is True and shown["outcome"] == "failed"  # still found under "Failed"
    other = json.loads(audit_line("read", "error", "", platform="x"))
    redis_urls.admin_client().xadd(KEYS.audit_stream, {"line": json.dumps({**other, "error": "timeout"})})
    failed = api.get("/api/activity").json()["activity"][0]
    assert failed["sentence"] == "Failed to read X" and failed["setup"] is False


def test_a_fleet_with_one_router_in_dry_run_never_says_nothing_is_sent(api, redis_urls):
    """Two routers, one rehearsing: the page said "Dry run: nothing is sent" while the other posted."""
    admin = redis_urls.admin_client()
    for router_id, dry in (("r1", False), ("r2", True)):
        admin.set(KEYS.router_heartbeat(router_id), json.dumps(
            {"router_id": router_id, "ts": time.time(), "dry_run": dry, "platforms_with_credentials": ["x"]}))
    body = api.get("/api/status").json()
    assert "nothing is sent" not in json.dumps(body)
    assert body["dry_run"]["words"].startswith("Router r1 sends for real")


def test_one_router_holding_the_switch_on_in_its_settings_never_reads_as_all_posting_stopped(api, redis_urls):
    """r1 has ROUTER_KILL_SWITCH=true, r2 has not and the live switch is off: the page said
    "Posting is stopped" in red while r2 posted."""
    admin = redis_urls.admin_client()
    for router_id, floor in (("r1", True), ("r2", False)):
        admin.set(KEYS.router_heartbeat(router_id), json.dumps(
            {"router_id": router_id, "ts": time.time(), "kill_switch_floor": floor, "platforms_with_credentials": ["x"]}))
    body = api.get("/api/status").json()
    kill = body["kill_switch"]
    assert kill["on"] is False and body["level"] != "red"
    assert kill["words"].startswith("Router r2 still posts") and "stopped" not in body["headline"].lower()
    admin.set(KEYS.kill_switch, json.dumps({"on": True, "by": "dashboard", "ts": time.time()}))
    body = api.get("/api/status").json()
    assert body["kill_switch"]["on"] is True and body["kill_switch"]["liftable"] is True and body["level"] == "red"
