"""Invariant 1 across the whole stack: a planted credential never reaches the agent process, a
prompt, a workspace file, Redis (keys, values, the AOF), a log line or a reply — also when every
platform echoes it back in a 401 body."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest

from protocol import SECRET_CREDENTIAL_VARIABLES
from tests.e2e.conftest import PLATFORMS, files_text, make_credentials, redis_dump, tool_reply

POST_PARAMS = {"reddit": {"subreddit": "safeclaw_test", "title": "Planted secrets test"}}
NEVER_SENT = {"X_API_SECRET", "X_ACCESS_SECRET"}  # OAuth 1.0a signing keys: only a signature travels


@pytest.fixture
def credentials():
    return make_credentials(tag="planted", special="+/~")


def secret_forms(value: str) -> set[str]:
    raw = value.encode()
    forms = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        forms |= {encoded.decode(), encoded.decode().rstrip("=")}
    return forms


def planted_forms(credentials: dict[str, str]) -> dict[str, set[str]]:
    """Every shape each secret may travel in; Reddit's Basic header carries base64('id:secret')."""
    forms = {name: secret_forms(credentials[name]) for name in SECRET_CREDENTIAL_VARIABLES}
    basic = f"{credentials['REDDIT_CLIENT_ID']}:{credentials['REDDIT_SECRET']}".encode()
    forms["REDDIT_SECRET"].add(base64.b64encode(basic).decode())
    return forms


def leaks(forms: dict[str, set[str]], where: str, text: str) -> list[str]:
    return [f"{name} ({form!r}) in {where}" for name, shapes in forms.items() for form in shapes
            if form in text]


def every_action_on_every_platform() -> list[str]:
    """Scripted replies: AUTH_TEST, GET_PROFILE and CREATE_POST on all five (8 actions per step)."""
    actions = [("AUTH_TEST", {"platform": p}) for p in PLATFORMS]
    actions += [("GET_PROFILE", {"platform": p}) for p in PLATFORMS]
    actions += [("CREATE_POST", {"platform": p, "text": f"secret test on {p}", **POST_PARAMS.get(p, {})})
                for p in PLATFORMS]
    return [tool_reply("Checking every account.", *actions[:8]),
            tool_reply("And the rest.", *actions[8:]),
            "I checked every account."]


def results_of(artifact: dict) -> list[dict]:
    return [r for step in artifact["steps"] for r in step.get("results", [])]


@pytest.mark.slow
def test_planted_secrets_appear_nowhere(stack, redis_urls):
    forms = planted_forms(stack.credentials)
    stack.start_router(ROUTER_LOG_LEVEL="DEBUG")
    # A careless platform puts the key into a successful answer too (the profile's name).
    stack.fakes.moltbook.agent = f"agent {stack.credentials['MOLTBOOK_API_KEY']}"

    working = stack.run_agent(every_action_on_every_platform(), stdin="Check all my accounts\n")
    assert working.returncode == 0, working.stderr
    assert working.stdout == "I checked every account.\n"
    outcomes = {(r["action"], r["params"]["platform"]): r for r in results_of(stack.artifact())}
    assert len(outcomes) == 15 and all(r["status"] == "ok" for r in outcomes.values()), outcomes
    assert [len(stack.fakes.posted_texts(p)) for p in PLATFORMS] == [1] * 5
    assert "[REDACTED]" in json.dumps(outcomes[("GET_PROFILE", "moltbook")]["result"])
    working_files = stack.agent_files_text()

    stack.fakes.set_fail_mode("auth")  # every 401 body now echoes what the router sent
    failing = stack.run_agent(every_action_on_every_platform(), stdin="Check them again\n")
    assert failing.returncode == 0, failing.stderr
    outcomes = {(r["action"], r["params"]["platform"]): r for r in results_of(stack.artifact())}
    assert len(outcomes) == 15 and {r.get("error") for r in outcomes.values()} == {"auth_failed"}, outcomes
    assert stack.prompt_cache().count("auth_failed") >= 15  # the last prompt holds every result

    sent = "".join(json.dumps(r.headers) + r.body.decode(errors="replace") + getattr(r, "raw_query", "")
                   for fake in stack.fakes.all.values() for r in fake.requests)
    for name in SECRET_CREDENTIAL_VARIABLES - NEVER_SENT:  # the planted values really were in play
        assert any(form in sent for form in forms[name]), name

    admin = redis_urls.admin_client()
    try:
        redis_text = redis_dump(admin)
    finally:
        admin.close()
    assert "safeclaw:router:idem:" in redis_text  # the stored replies are there to be searched
    haystacks = {
        "agent stdout/stderr (working)": working.stdout + working.stderr,
        "agent stdout/stderr (failing)": failing.stdout + failing.stderr,
        "agent environment": json.dumps(working.environ) + json.dumps(failing.environ),
        "agent workspace and log (working)": working_files,
        "agent workspace and log (failing)": stack.agent_files_text(),
        "redis keys and values": redis_text,
        "redis data dir (AOF)": files_text(redis_urls.server.dir),
        "router log, stderr and data dir": stack.router_text(),
    }
    assert working.environ and "REDIS_URL" in working.environ
    assert "output/prompt_cache.txt" in stack.agent_files_text() and "agent.log" in stack.agent_files_text()
    assert "e2e.log" in stack.router_text() and "e2e.stderr" in stack.router_text()
    found = [leak for where, text in haystacks.items() for leak in leaks(forms, where, text)]
    assert found == []
    assert stack.stop_router() == 0
    found = leaks(forms, "router files after stop", stack.router_text())
    assert found == []


@pytest.mark.slow
def test_the_agent_refuses_a_credential_in_its_environment(stack):
    value = stack.credentials["BSKY_PASSWORD"]
    run = stack.run_agent(["never asked"], stdin="hello\n", BSKY_PASSWORD=value)
    assert run.returncode == 2
    assert "BSKY_PASSWORD" in run.stderr and "router" in run.stderr
    assert value not in run.stdout + run.stderr + stack.agent_files_text()
