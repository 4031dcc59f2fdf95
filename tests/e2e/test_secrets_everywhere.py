"""Invariant 1 across the whole stack: a planted credential never reaches the agent process, a
prompt, a workspace file, Redis (keys, values, the AOF), a log line or a reply — also when every
platform echoes it back in a 401 body.

The model here is the Ollama provider talking to `FakeOllama`, which records every request: so
every prompt the model received is searched, not only the last one in prompt_cache.txt."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest

from protocol.credentials import SECRET_CREDENTIAL_VARIABLES
from tests.e2e.conftest import (
    CREDENTIAL_VARIABLES,
    PLATFORMS,
    files_text,
    make_credentials,
    redis_dump,
    tool_reply,
)
from tests.support.fake_ollama import FakeOllama

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
    return [
        f"{name} ({form!r}) in {where}" for name, shapes in forms.items() for form in shapes if form in text
    ]


def every_action_on_every_platform(message: str) -> list[str]:
    """Scripted replies: AUTH_TEST, GET_PROFILE and CREATE_POST on all five (8 actions per step).
    Each round posts its own words: the router refuses a text it sent already (duplicate_content)."""
    actions = [("AUTH_TEST", {"platform": p}) for p in PLATFORMS]
    actions += [("GET_PROFILE", {"platform": p}) for p in PLATFORMS]
    actions += [
        ("CREATE_POST", {"platform": p, "text": f"secret test on {p}: {message}", **POST_PARAMS.get(p, {})})
        for p in PLATFORMS
    ]
    return [
        tool_reply("Checking every account.", *actions[:8]),
        tool_reply("And the rest.", *actions[8:]),
        "I checked every account.",
    ]


@pytest.mark.slow
def test_planted_secrets_appear_nowhere(stack, redis_urls):
    forms = planted_forms(stack.credentials)
    # Two posts on Moltbook within a minute: lift its built-in pacing (1 post per 30 min) here.
    stack.start_router(ROUTER_LOG_LEVEL="DEBUG", ROUTER_PACING="moltbook:post=0")
    # A careless platform puts the key into a successful answer too (the profile's name).
    stack.fakes.moltbook.agent = f"agent {stack.credentials['MOLTBOOK_API_KEY']}"
    with FakeOllama() as llm:
        working = check_every_account(stack, llm, "Check all my accounts")
        outcomes = outcomes_of(stack)
        assert all(r["status"] == "ok" for r in outcomes.values()), outcomes
        assert [len(stack.fakes.posted_texts(p)) for p in PLATFORMS] == [1] * 5
        assert "[REDACTED]" in json.dumps(outcomes[("GET_PROFILE", "moltbook")]["result"])
        working_files = stack.agent_files_text()

        stack.fakes.set_fail_mode("auth")  # every 401 body now echoes what the router sent
        failing = check_every_account(stack, llm, "Check them again")
        outcomes = outcomes_of(stack)
        assert {r.get("error") for r in outcomes.values()} == {"auth_failed"}, outcomes
    prompts = [r.body["messages"][-1]["content"] for r in llm.requests if r.path == "/api/chat"]
    assert len(prompts) == 6 and prompts[-1].count("auth_failed") >= 15  # every result reached it
    assert_planted_values_were_sent(stack, forms)

    admin = redis_urls.admin_client()
    try:
        redis_text = redis_dump(admin)
    finally:
        admin.close()
    assert "{safeclaw}:router:idem:" in redis_text  # the stored replies are there to be searched
    haystacks = {
        "agent stdout/stderr": working.stdout + working.stderr + failing.stdout + failing.stderr,
        "agent environment": json.dumps(working.environ) + json.dumps(failing.environ),
        "every request the LLM received": json.dumps([r.body for r in llm.requests], ensure_ascii=False),
        "agent workspace and log (after the working run)": working_files,
        "agent workspace and log (after the failing run)": stack.agent_files_text(),
        "redis keys and values": redis_text,
        "redis data dir (AOF)": files_text(redis_urls.server.dir),
        "router log, stderr and data dir": stack.router_text(),
    }
    assert working.environ and "REDIS_URL" in working.environ and "OLLAMA_HOST" in failing.environ
    assert "output/prompt_cache.txt" in working_files and "agent.log" in working_files
    assert "e2e.log" in stack.router_text() and "e2e.stderr" in stack.router_text()
    found = [leak for where, text in haystacks.items() for leak in leaks(forms, where, text)]
    assert found == []
    assert stack.stop_router() == 0
    assert leaks(forms, "router files after stop", stack.router_text()) == []


def check_every_account(stack, llm, message: str):
    llm.enqueue(*every_action_on_every_platform(message))
    run = stack.run_agent([], stdin=message + "\n", SAFECLAW_LLM_PROVIDER="ollama", OLLAMA_HOST=llm.url)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "I checked every account.\n"
    return run


def outcomes_of(stack) -> dict:
    results = [r for step in stack.artifact()["steps"] for r in step.get("results", [])]
    outcomes = {(r["action"], r["params"]["platform"]): r for r in results}
    assert len(outcomes) == 15, outcomes
    return outcomes


def assert_planted_values_were_sent(stack, forms: dict[str, set[str]]) -> None:
    """Without this the search below could pass for a test that never used the secrets."""
    sent = "".join(
        json.dumps(r.headers) + r.body.decode(errors="replace") + getattr(r, "raw_query", "")
        for fake in stack.fakes.all.values()
        for r in fake.requests
    )
    for name in SECRET_CREDENTIAL_VARIABLES - NEVER_SENT:
        assert any(form in sent for form in forms[name]), name


@pytest.mark.slow
@pytest.mark.parametrize("name", CREDENTIAL_VARIABLES)
def test_the_agent_refuses_a_credential_in_its_environment(stack, name):
    value = stack.credentials[name]
    run = stack.run_agent(["never asked"], stdin="hello\n", **{name: value})
    assert run.returncode == 2
    assert name in run.stderr and "router" in run.stderr
    assert value not in run.stdout + run.stderr + stack.agent_files_text()
