"""`scripts/run_stack.py` end to end: private Redis + router + agent, stdin piped, nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.stack.stack_helpers import (
    CREATE_POST_REPLY,
    FINAL_REPLY,
    POST_TEXT,
    REPO_ROOT,
    RUN_STACK,
    alive,
    run_stack,
    stack_env,
)

FAKE_PASSWORD = "planted-bsky-app-password-7f3a9c"


def assert_nothing_left(run):
    assert set(run.pids) == {"redis", "router", "dashboard", "agent"}, run.stderr
    left = {name: pid for name, pid in run.pids.items() if alive(pid)}
    assert left == {}, f"processes left behind: {left}"


def test_one_message_makes_a_dry_run_post_and_everything_stops(tmp_path):
    env = stack_env(tmp_path, [CREATE_POST_REPLY, FINAL_REPLY],
                    BSKY_HANDLE="someone.bsky.social", BSKY_PASSWORD=FAKE_PASSWORD, ROUTER_DRY_RUN="true")
    run = run_stack(tmp_path, env, "please post hello on bluesky\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == FINAL_REPLY  # stdout carries the reply and nothing else
    assert_nothing_left(run)
    [post] = run.outbox()
    assert (post["action"], post["platform"], post["params"]["text"]) == ("CREATE_POST", "bsky", POST_TEXT)
    artifact = run.artifact_text()
    assert '"dry_run": true' in artifact and '"status": "ok"' in artifact
    # The credential went to the router only: not to the agent's workspace, output or the runner's files.
    assert FAKE_PASSWORD not in run.stdout + run.stderr + artifact
    for path in [p for name in ("run", "workspace", "logs") for p in run.dirs[name].rglob("*")]:
        if path.is_file():
            assert FAKE_PASSWORD.encode() not in path.read_bytes(), path


def test_no_credentials_and_dry_run_off_answers_which_variables_to_set(tmp_path):
    env = stack_env(tmp_path, [CREATE_POST_REPLY, FINAL_REPLY], ROUTER_DRY_RUN="false")
    run = run_stack(tmp_path, env, "please post hello on bluesky\n")
    assert run.returncode == 0, run.stderr
    assert_nothing_left(run)
    assert run.outbox() == []
    [result] = json.loads(run.artifact_text())["steps"][0]["results"]
    assert result["error"] == "no_credentials"
    assert "BSKY_HANDLE" in result["message"] and "BSKY_PASSWORD" in result["message"]
    assert "dry run" not in run.stderr


def test_without_credentials_dry_run_is_on_by_default_and_records_the_post(tmp_path):
    env = stack_env(tmp_path, [CREATE_POST_REPLY, FINAL_REPLY])
    run = run_stack(tmp_path, env, "please post hello on bluesky\n")
    assert run.returncode == 0, run.stderr
    assert "dry run" in run.stderr
    assert [p["params"]["text"] for p in run.outbox()] == [POST_TEXT]
    assert_nothing_left(run)
    assert '"dry_run": true' in run.artifact_text()


def test_second_run_reuses_the_passwords_and_keeps_them_private(tmp_path):
    env = stack_env(tmp_path, [FINAL_REPLY])
    first = run_stack(tmp_path, env, "hello\n")
    assert first.returncode == 0, first.stderr
    redis_dir = tmp_path / "run" / "redis"
    passwords = {p.name: p.read_text() for p in redis_dir.glob("*.password")}
    assert set(passwords) == {"agent.password", "router.password", "control.password", "mcp.password",
                              "upgrade.password"}
    mcp_env = (tmp_path / "run" / "mcp.env").read_text()  # for ./safeclaw mcp: the mcp user's login
    assert f"redis://mcp:{passwords['mcp.password'].strip()}@127.0.0.1:" in mcp_env
    assert all((redis_dir / name).stat().st_mode & 0o077 == 0 for name in passwords)
    second = run_stack(tmp_path, stack_env(tmp_path, [FINAL_REPLY]), "hello again\n")
    assert second.returncode == 0, second.stderr
    assert {p.name: p.read_text() for p in redis_dir.glob("*.password")} == passwords
    assert_nothing_left(second)
    for value in passwords.values():
        assert value.strip() not in first.stdout + first.stderr + second.stdout + second.stderr
    assert (redis_dir / "appendonlydir").is_dir()  # queued commands survive a restart


def test_given_redis_url_is_used_and_no_redis_is_started(tmp_path, redis_urls):
    env = stack_env(tmp_path, [FINAL_REPLY], REDIS_URL=redis_urls.agent_url)
    (tmp_path / "router.env").write_text(f"REDIS_URL={redis_urls.router_url}\n")
    run = run_stack(tmp_path, env, "hello\n")
    assert run.returncode == 0, run.stderr
    assert set(run.pids) == {"router", "agent"}
    assert not any(alive(pid) for pid in run.pids.values())
    assert "using the Redis given by REDIS_URL" in run.stderr


def test_given_redis_url_without_a_router_login_is_a_clear_error(tmp_path, redis_urls):
    env = stack_env(tmp_path, [FINAL_REPLY], REDIS_URL=redis_urls.agent_url)
    run = run_stack(tmp_path, env, "hello\n")
    assert run.returncode == 1
    assert "router/.env" in run.stderr and "Traceback" not in run.stderr
    assert redis_urls.server.agent_password not in run.stderr


def interrupt_a_running_stack(tmp_path):
    """Start the stack with input kept open, get one answer, then SIGINT its process group (what a
    terminal's Ctrl-C does). Returns (exit code, stderr, pids)."""
    env = stack_env(tmp_path, [FINAL_REPLY])
    for name in ("agent.env", "router.env"):
        (tmp_path / name).touch()
    proc = subprocess.Popen(
        [sys.executable, str(RUN_STACK), "--agent-env", str(tmp_path / "agent.env"),
         "--router-env", str(tmp_path / "router.env")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=REPO_ROOT, start_new_session=True,
    )
    try:
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == FINAL_REPLY  # the stack is up and answered
        pids = json.loads((tmp_path / "run" / "pids.json").read_text())
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    return code, stderr, pids


def test_ctrl_c_stops_all_four_by_their_pids(tmp_path):
    code, stderr, pids = interrupt_a_running_stack(tmp_path)
    assert code == 0, stderr
    assert set(pids) == {"redis", "router", "dashboard", "agent"}
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {name: pid for name, pid in pids.items() if alive(pid)} == {}


def test_ctrl_c_needs_no_sigkill(tmp_path):
    code, stderr, _ = interrupt_a_running_stack(tmp_path)
    assert code == 0 and "did not stop" not in stderr, stderr
