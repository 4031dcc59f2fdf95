"""Attacks on the dashboard's API: tokens where they do not belong, odd Authorization headers,
cross-site requests, public read, and approvals decided twice, late or with someone else's code."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time

import pytest
import redis
from starlette.testclient import TestClient

from dashboard.app import create_app
from dashboard.settings import ConfigError, DashboardSettings
from protocol.approvals import ApprovalError
from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.policy.approval_store import ApprovalStore
from tests.dashboard.helpers import BASE, TOKEN

KEYS = Keys()
ADMIN_PATHS = [
    ("/api/kill", {"on": True}),
    ("/api/inject-rule", {"rule": "be kind", "why": "x"}),
    ("/api/approvals/" + "a" * 32 + "/approve", {}),
    ("/api/approvals/" + "a" * 32 + "/deny", {}),
    ("/api/proposals/1/accept", {}),
]


def _settings(redis_urls, **extra: str) -> DashboardSettings:
    return DashboardSettings.from_env(
        {"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": TOKEN, **extra}
    )


@pytest.fixture
def client(redis_urls):
    with TestClient(create_app(_settings(redis_urls)), base_url=BASE) as test_client:
        yield test_client


def _nothing_written(redis_urls) -> None:
    admin = redis_urls.admin_client()
    assert admin.get(KEYS.kill_switch) is None
    assert admin.llen(KEYS.rule_injections) == 0
    assert admin.llen(KEYS.approvals_decided) == 0


# -- the token ---------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["token", "access_token", "authorization", "bearer", "DASHBOARD_TOKEN"])
def test_a_token_in_the_query_string_never_authenticates_and_is_never_logged(client, query, caplog):
    with caplog.at_level(logging.DEBUG):
        response = client.get(f"/api/status?{query}={TOKEN}")
        stream = client.get(f"/api/stream?{query}={TOKEN}")
        kill = client.post(f"/api/kill?{query}={TOKEN}", json={"on": True})
    assert response.status_code == stream.status_code == kill.status_code == 401
    server_side = [r.getMessage() for r in caplog.records if not r.name.startswith("httpx")]
    assert server_side and not [line for line in server_side if TOKEN in line]


@pytest.mark.parametrize(
    "header",
    [f"bearer {TOKEN}", f"BEARER {TOKEN}", f"Bearer   {TOKEN}", f"  Bearer {TOKEN}  ", f"Bearer\t{TOKEN}"],
)
def test_the_bearer_scheme_is_case_blind_and_spaces_do_not_matter(client, header):
    assert client.get("/api/status", headers={"Authorization": header}).status_code == 200


@pytest.mark.parametrize(
    "header",
    [
        f"Bearer {TOKEN[:8]} {TOKEN[8:]}",  # a space inside the token
        f"Bearer{TOKEN}",  # no separator
        f"Token {TOKEN}",
        f"Bearer {TOKEN} {TOKEN}",
        f"Bearer {TOKEN.upper()}",  # the token itself is case-sensitive
    ],
)
def test_near_misses_are_refused(client, header):
    assert client.get("/api/status", headers={"Authorization": header}).status_code == 401


@pytest.mark.parametrize("size", [1_000, 100_000, 1_000_000])
def test_a_very_long_token_is_a_401_not_a_500(client, size, caplog):
    long_token = TOKEN + "x" * size
    with caplog.at_level(logging.DEBUG):
        response = client.get("/api/status", headers={"Authorization": f"Bearer {long_token}"})
    assert response.status_code == 401
    assert len(caplog.text) < 10_000  # the log line does not carry the header


@pytest.mark.parametrize(
    "raw",
    [
        "Bearer tökén-ünïcode-0123456789".encode(),
        b"Bearer \xff\xfe\x00garbage",
        "Bearer 🔑🔑🔑🔑🔑🔑🔑🔑".encode(),
    ],
)
def test_non_ascii_or_binary_tokens_are_a_401_not_a_500(client, raw):
    response = client.get("/api/status", headers=[(b"authorization", raw)])
    assert response.status_code == 401


@pytest.mark.parametrize(
    "token", ["tökén-ünïcode-0123456789", "token with spaces 0123456789", "tab\ttoken-0123456789"]
)
def test_a_token_that_no_browser_could_send_is_refused_at_start(redis_urls, token):
    with pytest.raises(ConfigError, match="DASHBOARD_TOKEN"):
        DashboardSettings.from_env({"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": token})


def test_the_token_is_compared_in_constant_time(client, monkeypatch):
    """Both sides are hashed to equal-length digests and compared with hmac.compare_digest."""
    import dashboard.guard as app_module

    seen: list[tuple[bytes, bytes]] = []
    real = app_module.hmac.compare_digest

    def spy(a, b):
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(app_module.hmac, "compare_digest", spy)
    for header in (f"Bearer {TOKEN}", "Bearer x", f"Bearer {TOKEN}{'y' * 500}"):
        client.get("/api/status", headers={"Authorization": header})
    assert len(seen) == 3 and all(len(a) == len(b) == 32 for a, b in seen)


# -- cross-site --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
        "application/jsonp",
        "application/json-patch+json",
    ],
)
@pytest.mark.parametrize(("path", "body"), ADMIN_PATHS)
def test_a_post_that_is_not_json_never_acts(client, redis_urls, content_type, path, body):
    """The body a cross-site form or a text/plain fetch can send without a preflight, even with
    the token: refused (415), nothing written."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    response = client.post(path, content=json.dumps(body).encode(), headers=headers)
    assert response.status_code == 415, response.text
    _nothing_written(redis_urls)


def test_json_with_a_charset_is_taken(client):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json; charset=utf-8"}
    assert client.post("/api/kill", content=b'{"on": true}', headers=headers).status_code == 200


@pytest.mark.parametrize(("path", "body"), ADMIN_PATHS)
@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1.evil.example"])
def test_a_post_from_another_origin_never_acts_even_with_the_token(client, redis_urls, path, body, origin):
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": origin}
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers
    _nothing_written(redis_urls)


def test_a_post_from_the_pages_own_origin_acts(client):
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": BASE}
    assert client.post("/api/kill", json={"on": True}, headers=headers).status_code == 200


@pytest.mark.parametrize("path", [p for p, _ in ADMIN_PATHS] + ["/api/status", "/api/stream"])
def test_a_preflight_gets_no_cors_grant(client, redis_urls, path):
    response = client.options(
        path,
        headers={
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert response.status_code in (401, 405)
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]
    _nothing_written(redis_urls)


# -- public read -------------------------------------------------------------------------------
@pytest.mark.parametrize(("path", "body"), ADMIN_PATHS)
def test_public_read_opens_no_post_in_any_form(redis_urls, path, body):
    with TestClient(create_app(_settings(redis_urls, DASHBOARD_PUBLIC_READ="true")), base_url=BASE) as anon:
        assert anon.post(path, json=body).status_code == 401
        assert anon.post(path, content=b"on=true", headers={"Content-Type": "text/plain"}).status_code == 401
        assert anon.put(path, json=body).status_code in (401, 405)
        assert anon.get(path).status_code in (401, 405)
    _nothing_written(redis_urls)


def test_public_read_never_opens_the_live_stream(redis_urls):
    """The stream carries every approval and audit line as it happens: the owner's console only."""
    with TestClient(create_app(_settings(redis_urls, DASHBOARD_PUBLIC_READ="true")), base_url=BASE) as anon:
        assert anon.get("/api/status").status_code == 200
        assert anon.get("/api/stream").status_code == 401
        assert (
            anon.get("/api/stream", headers={"Authorization": "Bearer wrong-wrong-wrong-1"}).status_code
            == 401
        )


# -- approvals ---------------------------------------------------------------------------------
def _held(redis_urls, text="hello", ttl=3600, now=None) -> tuple[ApprovalStore, str, str]:
    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", ttl)
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, "telegram:1", 60)
    request = store.request(
        envelope, {"platform": "bsky", "kind": "post", "text": text, "target": None}, text, now
    )
    return store, request.approval_id, request.owner_code


def _post(client, path):
    return client.post(path, json={}, headers={"Authorization": f"Bearer {TOKEN}"})


def test_approve_twenty_times_at_once_takes_exactly_one(client, redis_urls):
    _, approval_id, _ = _held(redis_urls)
    barrier = threading.Barrier(20)
    codes: list[int] = []

    def hit(i: int) -> None:
        barrier.wait()
        codes.append(
            _post(client, f"/api/approvals/{approval_id}/{'approve' if i % 2 else 'deny'}").status_code
        )

    threads = [threading.Thread(target=hit, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [200] + [409] * 19
    assert redis_urls.admin_client().lrange(KEYS.approvals_decided, 0, -1) == [approval_id]


def test_an_expired_approval_cannot_be_approved(client, redis_urls):
    _, approval_id, _ = _held(redis_urls, ttl=60, now=time.time() - 120)
    response = _post(client, f"/api/approvals/{approval_id}/approve")
    assert response.status_code == 409 and "expired" in response.json()["message"]
    _nothing_written(redis_urls)


def test_a_denied_approval_cannot_then_be_approved(client, redis_urls):
    _, approval_id, _ = _held(redis_urls)
    assert _post(client, f"/api/approvals/{approval_id}/deny").status_code == 200
    assert _post(client, f"/api/approvals/{approval_id}/approve").status_code == 409
    decision = json.loads(redis_urls.admin_client().get(KEYS.approval_decision(approval_id)))
    assert decision["decision"] == "deny"


def test_a_relayed_code_works_only_for_its_own_approval_and_only_once(redis_urls):
    store, first_id, first_code = _held(redis_urls, "first")
    _, second_id, second_code = _held(redis_urls, "second")
    with pytest.raises(ApprovalError):
        store.relay_owner_decision(second_id, "approve", first_code, "the owner (chat)")
    with pytest.raises(ApprovalError):
        store.relay_owner_decision(first_id, "approve", first_code.upper(), "the owner (chat)")
    store.relay_owner_decision(first_id, "approve", first_code, "the owner (chat)")
    for decision in ("approve", "deny"):  # the same code replayed
        with pytest.raises(ApprovalError):
            store.relay_owner_decision(first_id, decision, first_code, "the owner (chat)")
    assert redis_urls.admin_client().lrange(KEYS.approvals_decided, 0, -1) == [first_id]
    assert redis_urls.admin_client().get(KEYS.approval_decision(second_id)) is None
    assert second_code


def test_the_rule_list_is_capped_and_a_refused_rule_is_not_kept(client, redis_urls):
    from protocol.rule_injections import MAX_PENDING

    admin = redis_urls.admin_client()
    for i in range(MAX_PENDING - 1):
        admin.lpush(KEYS.rule_injections, json.dumps({"rule": f"r{i}", "author": "x", "ts": 1}))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/inject-rule", json={"rule": "the last one"}, headers=headers).status_code == 200
    refused = client.post("/api/inject-rule", json={"rule": "one too many"}, headers=headers)
    assert refused.status_code == 503 and "start the agent" in refused.json()["message"]
    assert client.post("/api/proposals/1/accept", json={}, headers=headers).status_code in (404, 503)
    queued = admin.lrange(KEYS.rule_injections, 0, -1)
    assert len(queued) == MAX_PENDING and "one too many" not in "".join(queued)


def test_the_real_server_answers_huge_or_binary_authorization_headers_without_a_500(redis_urls):
    """Through uvicorn itself (the HTTP parser a test client skips): 400 or 401, never a 500."""
    import socket

    import uvicorn

    from scripts.stack_redis import free_port
    from tests.router.router_helpers import wait_until

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(_settings(redis_urls)), host="127.0.0.1", port=port, log_level="critical")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, "uvicorn to start", 15)
        headers = [b"Bearer " + b"a" * size for size in (1_000, 60_000, 200_000, 2_000_000)]
        headers += [b"Bearer \xc3\xa9\xff\xfe", b"Bearer \x00\x01", b"Bearer " + TOKEN.encode() + b"\xff"]
        for value in headers:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                request = (
                    b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + value + b"\r\n\r\n"
                )
                # The server may answer 400 and close before a 2 MB header is all sent: read it anyway.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    sock.sendall(request)
                try:
                    status_line = sock.recv(200).split(b"\r\n")[0]
                except ConnectionResetError:
                    status_line = b"HTTP/1.1 400 Bad Request"  # refused before a line could be read
            assert status_line in (b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 401 Unauthorized"), (
                len(value),
                status_line,
            )
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- DNS rebinding and lockouts (issue 18 items 12 and 13) -------------------------------------
@pytest.mark.parametrize(
    "host",
    [
        "evil.example:8080",
        "evil.example",
        "127.0.0.1.evil.example:8080",
        "localhost.evil.example",
        "",
        "[::2]:8080",
    ],
)
def test_a_page_on_another_name_resolving_here_reads_nothing(redis_urls, host):
    """DNS rebinding: with public read on, a page on evil.example (now resolving to 127.0.0.1) is
    same-origin as far as the browser knows; the Host it sends is its own name."""
    _held(redis_urls, "a held draft")
    with TestClient(create_app(_settings(redis_urls, DASHBOARD_PUBLIC_READ="true")), base_url=BASE) as anon:
        for path in ("/api/approvals", "/api/activity", "/api/status", "/api/governance", "/"):
            response = anon.get(path, headers={"Host": host})
            assert response.status_code == 421, (path, response.status_code)
            assert "held draft" not in response.text
        with_token = anon.post(
            "/api/kill", json={"on": True}, headers={"Host": host, "Authorization": f"Bearer {TOKEN}"}
        )
        assert with_token.status_code == 421
    _nothing_written(redis_urls)


@pytest.mark.parametrize("host", ["127.0.0.1:8080", "localhost:9999", "[::1]:8080", "LOCALHOST"])
def test_the_loopback_names_are_answered_on_any_port(redis_urls, host):
    """A published port may differ from the one inside a container; a rebinding page cannot send a
    loopback name as its Host."""
    with TestClient(create_app(_settings(redis_urls, DASHBOARD_PUBLIC_READ="true")), base_url=BASE) as anon:
        assert anon.get("/api/status", headers={"Host": host}).status_code == 200


def test_dashboard_origin_names_the_one_other_address_and_its_origin(redis_urls):
    settings = _settings(redis_urls, DASHBOARD_ORIGIN="https://claw.example.net")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(settings), base_url=BASE) as client:
        ok = {**auth, "Host": "claw.example.net", "Origin": "https://claw.example.net"}
        assert client.get("/api/status", headers=ok).status_code == 200
        assert client.post("/api/kill", json={"on": False}, headers=ok).status_code == 200
        other = {**auth, "Host": "claw.example.net", "Origin": "https://evil.example"}
        assert client.post("/api/kill", json={"on": True}, headers=other).status_code == 403
        assert client.get("/api/approvals", headers=other).status_code == 403  # reads too
        assert client.get("/api/status", headers={**auth, "Host": "claw.example.org"}).status_code == 421
    with pytest.raises(ConfigError, match="DASHBOARD_ORIGIN"):
        _settings(redis_urls, DASHBOARD_ORIGIN="claw.example.net/path")


def test_another_sites_requests_cannot_lock_the_owner_out(client, redis_urls):
    """25 no-cors POSTs from another origin carry no Authorization header (a browser cannot add one
    without a preflight the dashboard never answers): none counts as a wrong token."""
    from dashboard.throttle import MAX_FAILURES

    for _ in range(MAX_FAILURES + 5):
        refused = client.post(
            "/api/kill",
            content=b"{}",
            headers={"Content-Type": "text/plain", "Origin": "https://evil.example"},
        )
        assert refused.status_code == 403
        assert (
            client.post("/api/kill", content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 401
        )
    owner = client.post("/api/kill", json={"on": True}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert owner.status_code == 200
    assert json.loads(redis_urls.admin_client().get(KEYS.kill_switch))["on"] is True


@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("file", "DASHBOARD-PUBLIC-READ"),
        ("file", "DASHBOARD_ORIGN"),
        ("file", "DASHBOARDS_HOST"),
        ("environment", "DASHBOARD_0RIGIN"),
        ("environment", "dashboard_host"),
        ("environment", "DASHBОARD_PUBLIC_READ"),  # a Cyrillic О
    ],
)
def test_a_misspelt_dashboard_setting_stops_it_naming_the_setting(redis_urls, tmp_path, where, name):
    env_file = tmp_path / "dashboard.env"
    base = {
        "REDIS_URL": redis_urls.control_url,
        "DASHBOARD_TOKEN": TOKEN,
        "PATH": "/usr/bin",
        "HOME": "/root",
    }
    if where == "file":
        env_file.write_text(f"{name}=x\n")
        environ = base
    else:
        env_file.write_text("")
        environ = {**base, name: "x"}
    with pytest.raises(ConfigError, match="did you mean DASHBOARD_"):
        DashboardSettings.load(env_file, environ)


def test_the_usual_environment_is_not_taken_for_a_misspelling(redis_urls, tmp_path):
    env_file = tmp_path / "dashboard.env"
    env_file.write_text("DASHBOARD_ORIGIN=https://claw.example.net\nSAFECLAW_WORKSPACE=/tmp/w\n")
    environ = {
        "REDIS_URL": redis_urls.control_url,
        "DASHBOARD_TOKEN": TOKEN,
        **{name: "x" for name in ("PATH", "HOME", "TERM", "LANG", "SHELL", "USER", "HOSTNAME", "PWD")},
    }
    assert DashboardSettings.load(env_file, environ).origin == "https://claw.example.net"


# -- the lockout behind a proxy, and what a browser says of a request (wave 3, second round) ------
STRONG = "Zq8Rt5Lw2Kx9Pm4Vb7nYc3Hd6Jf1Gs0A-_kT"  # as ./safeclaw makes one: 32+ varied characters


def test_behind_a_proxy_a_strangers_wrong_tokens_never_lock_the_owner_out(redis_urls):
    """Through a TLS proxy or a tunnel every request comes from the proxy's address: a stranger's
    wrong tokens would lock that address out, the owner's kill switch with it. A strong token is
    never refused for someone else's guesses; the guesses still are."""
    from dashboard.throttle import MAX_FAILURES

    settings = DashboardSettings.from_env({"REDIS_URL": redis_urls.control_url, "DASHBOARD_TOKEN": STRONG})
    with TestClient(create_app(settings), base_url=BASE) as proxy:  # one address for everyone
        for i in range(MAX_FAILURES + 5):
            proxy.get("/api/status", headers={"Authorization": f"Bearer guess-{i:030d}"})
        guess = proxy.post("/api/kill", json={"on": False}, headers={"Authorization": "Bearer " + "g" * 40})
        assert guess.status_code == 429
        owner = proxy.post("/api/kill", json={"on": True}, headers={"Authorization": f"Bearer {STRONG}"})
        assert owner.status_code == 200, owner.text
        assert proxy.get("/api/status", headers={"Authorization": f"Bearer {STRONG}"}).status_code == 200
    assert json.loads(redis_urls.admin_client().get(KEYS.kill_switch))["on"] is True


@pytest.mark.parametrize("token", [TOKEN, "owner-chosen-token-0123456789", "Password123" * 3])
def test_a_token_typed_by_hand_is_not_strong_and_keeps_the_lockout(token):
    from dashboard.guard import strong_token

    assert not strong_token(token) and strong_token(STRONG)


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
def test_a_request_the_browser_says_comes_from_another_site_is_refused_without_an_origin(redis_urls, site):
    """A browser sends no Origin on a plain GET, but it says where the request comes from."""
    _held(redis_urls, "a held draft")
    with TestClient(create_app(_settings(redis_urls, DASHBOARD_PUBLIC_READ="true")), base_url=BASE) as anon:
        for path in ("/api/approvals", "/api/status", "/api/activity"):
            refused = anon.get(path, headers={"Sec-Fetch-Site": site})
            assert refused.status_code == 403 and "held draft" not in refused.text, path
        assert anon.get("/api/approvals", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
        assert anon.get("/", headers={"Sec-Fetch-Site": site}).status_code == 200  # a link to the page


def test_the_agents_keys_holding_bytes_that_are_not_text_fail_no_reader(redis_urls):
    """The agent's login writes its heartbeat, cost and autonomy keys with any bytes; a value that
    is not UTF-8 once raised inside the status read and every part of the answer was lost."""
    agent = redis.Redis.from_url(redis_urls.agent_url)
    for key in (KEYS.agent_heartbeat, KEYS.agent_cost, KEYS.agent_autonomy):
        agent.set(key, b"\xff\xfe{\"ts\": \x80")
    redis_urls.admin_client().set(KEYS.kill_switch, json.dumps({"on": True, "by": "owner", "ts": 1.0}))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(_settings(redis_urls)), base_url=BASE) as client:
        for path in ("/api/status", "/api/heartbeat", "/api/cost", "/api/autonomy", "/api/stats", "/api/charts"):
            assert client.get(path, headers=auth).status_code == 200, path
        status = client.get("/api/status", headers=auth).json()
    assert status["kill_switch"]["on"] is True and status["level"] == "red"


def test_the_agents_keys_are_read_only_up_to_a_bound(redis_urls):
    """The agent's login can fill its keys with hundreds of megabytes, and every status read (each
    page, each live update) fetched and parsed all of it: now only the first 64 KB are read, and a
    longer value is unreadable, said so on its own line, never parsed."""
    from dashboard.values import AGENT_VALUE_CHARS

    agent = redis.Redis.from_url(redis_urls.agent_url)
    padded = json.dumps({"ts": time.time(), "pid": 1, "pad": "x" * (AGENT_VALUE_CHARS + 10)})
    for key in (KEYS.agent_heartbeat, KEYS.agent_cost, KEYS.agent_autonomy):
        agent.set(key, padded)
    redis_urls.admin_client().set(KEYS.kill_switch, json.dumps({"on": True, "by": "owner", "ts": 1.0}))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(_settings(redis_urls)), base_url=BASE) as client:
        status = client.get("/api/status", headers=auth).json()
        beat = client.get("/api/heartbeat", headers=auth).json()
        cost = client.get("/api/cost", headers=auth).json()
    agent_line = next(p for p in status["parts"] if p["part"] == "agent")
    assert "cannot be read" in agent_line["words"], agent_line
    assert status["kill_switch"]["on"] is True and beat["agent"] is None and cost["available"] is False
