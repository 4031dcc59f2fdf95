"""`python -m router.social` as a real subprocess: one JSON object out, exit 0/1, no secret ever."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from router.registry import discover_skills
from router.social.cli import COMMANDS, SEED_ERRORS, CommandError, seed_kind
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_x import ME_ID, FakeX

REPO_ROOT = Path(__file__).resolve().parents[3]
PLANTED = "planted-Secret-7f3Kq9Zx"
X_CREDS = {"X_API_KEY": "ck-cli-1234", "X_API_SECRET": "cs-cli-5678",
           "X_ACCESS_TOKEN": f"{ME_ID}-at-cli-9012", "X_ACCESS_SECRET": "as-cli-3456"}


def run_cli(stdin: str | bytes, tmp_path: Path, env_file_text: str = "", **env: str):
    env_file = tmp_path / "router.env"
    env_file.write_text(env_file_text)
    child_env = {"PATH": os.environ.get("PATH", ""), "ROUTER_ENV_FILE": str(env_file),
                 "ROUTER_DATA_DIR": str(tmp_path / "data"), **env}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([sys.executable, "-m", "router.social"], input=data, capture_output=True,
                          cwd=REPO_ROOT, env=child_env, timeout=60)
    out = done.stdout.decode()
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out  # exactly one JSON object
    answer = json.loads(lines[0])
    assert "Traceback" not in out + done.stderr.decode()
    return done.returncode, answer, out + done.stderr.decode()


@pytest.mark.parametrize(("stdin", "error"), [
    ("", "empty_input"),
    ("   \n", "empty_input"),
    ("{not json", "invalid_json"),
    (b"\xff\xfe\xfd", "invalid_json"),
    ("[1, 2]", "invalid_json"),
    ('"auth_test"', "invalid_json"),
    ('{"command": "launch_rocket", "platform": "x"}', "unknown_command"),
    ('{"platform": "x"}', "unknown_command"),
    ('{"command": "auth_test", "platform": "myspace"}', "unknown_platform"),
    ('{"command": "auth_test"}', "unknown_platform"),
])
def test_bad_input_is_one_clear_error(tmp_path, stdin, error):
    code, answer, _ = run_cli(stdin, tmp_path)
    assert code == 1
    assert answer["success"] is False and answer["error"] == error and answer["message"]


def test_missing_credentials_name_the_variables(tmp_path):
    code, answer, _ = run_cli('{"command": "auth_test", "platform": "reddit"}', tmp_path)
    assert (code, answer["error"]) == (1, "no_credentials")
    assert "REDDIT_SECRET" in answer["message"]


def test_invalid_params_map_to_invalid_json(tmp_path):
    code, answer, _ = run_cli('{"command": "post", "platform": "x", "text": ""}', tmp_path, **X_CREDS)
    assert (code, answer["error"]) == (1, "invalid_json")
    assert "text" in answer["message"]


def test_every_command_maps_onto_a_skill():
    skills = discover_skills()
    assert set(COMMANDS.values()) <= set(skills)
    assert {"empty_input", "invalid_json", "internal_error"} <= SEED_ERRORS


@pytest.fixture
def fake_x():
    server = FakeX(api_key=X_CREDS["X_API_KEY"], api_secret=X_CREDS["X_API_SECRET"],
                   access_token=X_CREDS["X_ACCESS_TOKEN"], access_secret=X_CREDS["X_ACCESS_SECRET"]).start()
    yield server
    server.stop()


@pytest.fixture
def fake_moltbook():
    server = FakeMoltbook(api_key=PLANTED).start()
    yield server
    server.stop()


def test_a_real_post_through_the_cli(tmp_path, fake_x, redis_urls):
    request = {"command": "post", "platform": "x", "text": "hello from the one-shot CLI"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url,
                              REDIS_URL=redis_urls.router_url, **X_CREDS)
    assert code == 0, answer
    assert answer["success"] is True and answer["url"] == f"https://x.com/safeclaw_bot/status/{answer['id']}"
    assert fake_x.tweets[answer["id"]]["text"] == "hello from the one-shot CLI"


def test_without_redis_the_bounds_are_counted_on_disk(tmp_path, fake_x):
    def post(text: str, **env: str):
        request = {"command": "post", "platform": "x", "text": text}
        return run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, **X_CREDS, **env)[:2]

    code, answer = post("the first of the day")
    assert code == 0 and answer["success"] is True, answer
    code, answer = post("The first of the day!")
    assert (code, answer["error"], answer["reason"]) == (1, "rate_limited", "duplicate_content")
    assert "similar" in answer["message"] and "7 days" in answer["message"] and answer["retry_after"] >= 1
    code, answer = post("something else", ROUTER_QUOTAS="x:post=1")
    assert (code, answer["error"], answer["reason"]) == (1, "rate_limited", "quota_exceeded")
    assert "1 a day" in answer["message"] and "00:00 UTC" in answer["message"]
    assert [t["text"] for t in fake_x.tweets.values()] == ["the first of the day"]
    assert (tmp_path / "data" / "bounds.sqlite3").exists()


def test_the_cli_shares_the_routers_quotas_and_duplicate_guard(tmp_path, fake_x, redis_urls):
    def post(text: str, **env: str):
        request = {"command": "post", "platform": "x", "text": text}
        return run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, REDIS_URL=redis_urls.router_url,
                       **X_CREDS, **env)[:2]

    assert post("the first of the day")[0] == 0
    code, answer = post("The first of the day!")
    assert (code, answer["error"], answer["reason"]) == (1, "rate_limited", "duplicate_content")
    code, answer = post("something else", ROUTER_QUOTAS="x:post=1")
    assert (code, answer["error"], answer["reason"]) == (1, "rate_limited", "quota_exceeded")
    assert answer["retry_after"] >= 1
    assert [t["text"] for t in fake_x.tweets.values()] == ["the first of the day"]
    assert not (tmp_path / "data" / "bounds.sqlite3").exists()  # Redis holds them, with the routers


def test_credentials_from_the_env_file_and_environment_wins(tmp_path, fake_x):
    file_text = "\n".join(f"{k}={v}" for k, v in X_CREDS.items()) + "\nX_API_BASE=http://127.0.0.1:9\n"
    code, answer, _ = run_cli('{"command": "auth_test", "platform": "x"}', tmp_path, env_file_text=file_text,
                              X_API_BASE=fake_x.url)
    assert code == 0, answer
    assert answer["success"] is True and answer["account"]["handle"] == "@safeclaw_bot"


def test_a_planted_secret_echoed_by_the_platform_is_never_printed(tmp_path, fake_moltbook):
    fake_moltbook.fail_mode = "auth"  # its 401 body repeats the Authorization header it got
    code, answer, everything = run_cli(
        '{"command": "get_profile", "platform": "moltbook"}', tmp_path,
        env_file_text=f"BSKY_PASSWORD={PLANTED}-bsky\nSOME_SERVICE_TOKEN={PLANTED}-other\n",
        MOLTBOOK_API_KEY=PLANTED, MOLTBOOK_API_BASE=fake_moltbook.base)
    assert (code, answer["error"]) == (1, "auth_failed")
    assert any(PLANTED in json.dumps(r.headers) for r in fake_moltbook.requests)  # it was sent...
    assert PLANTED not in everything  # ...and never printed, on stdout or stderr


def test_a_planted_secret_in_a_successful_answer_is_redacted(tmp_path, fake_moltbook):
    fake_moltbook.agent = f"agent-{PLANTED}"  # the platform puts the key into the profile itself
    code, answer, everything = run_cli(
        '{"command": "get_profile", "platform": "moltbook"}', tmp_path,
        MOLTBOOK_API_KEY=PLANTED, MOLTBOOK_API_BASE=fake_moltbook.base)
    assert code == 0 and answer["success"] is True
    assert PLANTED not in everything and "[REDACTED]" in json.dumps(answer)


@pytest.mark.parametrize(("env", "error"), [
    ({"ROUTER_KILL_SWITCH": "1"}, "kill_switch"),
    ({"ROUTER_REQUIRE_APPROVAL": "x:post"}, "approval_required"),
    ({"ROUTER_REQUIRE_APPROVAL": "CREATE_POST"}, "approval_required"),
])
def test_the_cli_obeys_the_routers_policy(tmp_path, fake_x, env, error):
    request = {"command": "post", "platform": "x", "text": "not through the back door"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, **X_CREDS, **env)
    assert (code, answer["error"], answer["reason"]) == (1, "request_failed", error)
    assert fake_x.tweets == {}


def test_the_cli_refuses_an_unknown_policy_setting_naming_it(tmp_path):
    code, answer, _ = run_cli('{"command": "auth_test", "platform": "x"}', tmp_path, ROUTER_REQUIRE_APPROVAL="post_x")
    assert code == 1 and "'post_x'" in answer["message"] and "ROUTER_REQUIRE_APPROVAL" in answer["message"]


def test_the_cli_refuses_to_publish_a_secret(tmp_path, fake_x):
    request = {"command": "post", "platform": "x", "text": f"my key: {X_CREDS['X_API_SECRET']}"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, **X_CREDS)
    assert (code, answer["error"], answer["reason"]) == (1, "request_failed", "secret_in_text")
    assert fake_x.tweets == {}


def test_the_cli_checks_in_the_routers_order_a_secret_before_the_approval(tmp_path, fake_x):
    """The same checks in the same order as the worker: a post that needs approval and holds a
    secret is refused for the secret (the worker never holds a secret for the owner)."""
    request = {"command": "post", "platform": "x", "text": f"my key: {X_CREDS['X_API_SECRET']}"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, **X_CREDS,
                              ROUTER_REQUIRE_APPROVAL="x:post")
    assert (code, answer["error"], answer["reason"]) == (1, "request_failed", "secret_in_text")
    assert fake_x.tweets == {}


def test_a_post_the_router_would_hold_for_the_owner_is_not_run_by_the_cli(tmp_path, fake_x):
    """A text carrying a blob waits for the owner in the router; a one-shot run cannot wait."""
    blob = base64.b64encode(b"the key you asked for is in here").decode()
    request = {"command": "post", "platform": "x", "text": f"check this out {blob}"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, **X_CREDS)
    assert (code, answer["error"], answer["reason"]) == (1, "request_failed", "approval_required")
    assert "decodes" in answer["message"]
    assert fake_x.tweets == {}


def test_the_cli_obeys_the_live_kill_switch(tmp_path, fake_x, redis_urls):
    admin = redis_urls.admin_client()
    admin.set(redis_urls.keys.kill_switch, json.dumps({"on": True, "by": "dashboard"}))
    request = {"command": "post", "platform": "x", "text": "stopped from the dashboard"}
    code, answer, _ = run_cli(json.dumps(request), tmp_path, X_API_BASE=fake_x.url, REDIS_URL=redis_urls.router_url,
                              **X_CREDS)
    assert (code, answer["error"], answer["reason"]) == (1, "request_failed", "kill_switch")
    assert "dashboard" in answer["message"]
    assert fake_x.tweets == {}


def test_every_router_error_kind_answers_under_a_seed_type():
    for kind in ("kill_switch", "approval_required", "secret_in_text", "quota_exceeded", "paced",
                 "duplicate_content", "circuit_open", "bounds_unavailable", "busy", "crashed",
                 "not_found", "a_kind_added_later"):
        answer = CommandError(kind, "why").answer()
        assert answer["error"] in SEED_ERRORS and answer["reason"] == kind
    assert seed_kind("paced") == "rate_limited" and "reason" not in CommandError("auth_failed", "x").answer()
