"""`start_agent.py status` and `doctor` against a running stack (real Redis + router) and a stopped one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
import redis

from agent.config.settings import load_settings
from agent.link.redis_pool import build_redis
from agent.status.heartbeat import AgentHeartbeat
from agent.status.report import status_lines
from protocol import kill_switch
from tests.stack.stack_helpers import REPO_ROOT, START_AGENT
from tests.support.redis_server import free_port

ROUTER_ID = "health-test-router"


def agent_cli(command, env, timeout=60):
    return subprocess.run([sys.executable, str(START_AGENT), command], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=timeout)


def base_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTER_", "BSKY_"))}
    env.update({"SAFECLAW_LLM_PROVIDER": "scripted", **extra})
    return env


@pytest.fixture
def running_router(redis_urls, tmp_path):
    env = base_env(REDIS_URL=redis_urls.router_url, ROUTER_ID=ROUTER_ID,
                   ROUTER_DATA_DIR=str(tmp_path / "data"), ROUTER_LOG_FILE=str(tmp_path / "router.log"),
                   MASTODON_INSTANCE="https://masto.example",
                   MASTODON_TOKEN="planted-mastodon-token-91ac")
    empty_env_file = tmp_path / "router.env"
    empty_env_file.touch()
    process = subprocess.Popen([sys.executable, str(REPO_ROOT / "router" / "start_router.py"),
                                "--env-file", str(empty_env_file)], env=env, cwd=REPO_ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    admin = redis_urls.admin_client()
    try:
        deadline = time.monotonic() + 60
        while admin.get(redis_urls.keys.router_heartbeat(ROUTER_ID)) is None:
            assert process.poll() is None, "the router exited"
            assert time.monotonic() < deadline, "no router heartbeat"
            time.sleep(0.05)
        yield redis_urls
    finally:
        admin.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_status_of_a_running_stack(running_router):
    result = agent_cli("status", base_env(REDIS_URL=running_router.agent_url))
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "✓ LLM scripted (scripted) answers" in out
    assert "✓ Redis answers at 127.0.0.1:" in out and "as user agent" in out
    assert "✓ router up: it can post, reply, like" in out, out
    for skill in ("CREATE_POST", "AUTH_TEST", "NOTE", "PING"):  # what it can do, not its skills' names
        assert skill not in out, out
    assert "on Mastodon" in out and "heartbeat" not in out, out
    assert "✓ queue: 0 command(s) waiting for a router" in out
    assert "dead-letter" not in out and "safeclaw:" not in out  # no Redis key, no empty list named
    assert len(out.splitlines()) <= 7
    assert "✓ LLM cost today $0.0000 of $2.00, total $0.0000 of $50.00, 0 call(s)" in out
    assert running_router.server.agent_password not in out + result.stderr
    assert "planted-mastodon-token-91ac" not in out + result.stderr


def test_status_shows_no_money_budget_for_the_free_embedded_model(running_router):
    """A "$0.0000 of $2.00" for the embedded model read as if it were paid for."""
    beat = {"ts": time.time(), "pid": os.getpid(), "llm_provider": "local", "llm_model": "smollm2-135m-instruct"}
    running_router.admin_client().set(running_router.keys.agent_heartbeat, json.dumps(beat))
    out = agent_cli("status", base_env(REDIS_URL=running_router.agent_url)).stdout
    assert "✓ LLM cost: none, the embedded model runs on this machine and is free" in out, out
    assert "$" not in out, out


@pytest.mark.slow
def test_doctor_of_a_running_stack_passes(running_router):
    env = base_env(REDIS_URL=running_router.agent_url, SAFECLAW_CHROMIUM="/usr/bin/chromium",
                   SAFECLAW_CHROMEDRIVER="/usr/bin/chromedriver")
    result = agent_cli("doctor", env)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in ("✓ Python 3.", "✓ packages importable", "✓ no platform credentials",
                     "✓ Redis answers", "✓ ACL in force", "✓ the Redis default user is off",
                     "✓ router up", "✓ browser:", "✓ LLM scripted"):
        assert expected in out, out
    assert "✗" not in out and "All checks passed." in out


@pytest.mark.slow
def test_status_and_doctor_report_the_llm_the_running_agent_uses_and_the_posting_switches(
    running_router, tmp_path
):
    """Issue 21, item 4: the stack ran on another provider than the configured one (the embedded
    model when Ollama does not answer); status and doctor in a second terminal checked the
    configured Ollama and failed. They now read the running agent's heartbeat."""
    replies = tmp_path / "replies.json"
    replies.write_text("[]", encoding="utf-8")
    agent = subprocess.Popen([sys.executable, str(START_AGENT)], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO_ROOT,
                             env=base_env(REDIS_URL=running_router.agent_url,
                                          SAFECLAW_SCRIPTED_REPLIES=str(replies)))
    admin = running_router.admin_client()
    try:
        deadline = time.monotonic() + 60
        while admin.get(running_router.keys.agent_heartbeat) is None:
            assert agent.poll() is None and time.monotonic() < deadline, "no agent heartbeat"
            time.sleep(0.05)
        # The second terminal: configured for an Ollama that does not answer.
        second = base_env(REDIS_URL=running_router.agent_url, SAFECLAW_LLM_PROVIDER="ollama",
                          OLLAMA_HOST=f"http://127.0.0.1:{free_port()}",
                          SAFECLAW_CHROMIUM="/usr/bin/chromium", SAFECLAW_CHROMEDRIVER="/usr/bin/chromedriver")
        status, doctor = agent_cli("status", second), agent_cli("doctor", second)
        for result in (status, doctor):
            out = result.stdout
            assert result.returncode == 0, out + result.stderr
            assert "✓ LLM scripted (scripted) of the running agent answers" in out, out
            [llm_line] = [line for line in out.splitlines() if "LLM scripted" in line]
            assert not re.search(r"\bpid\b", llm_line), llm_line  # a process id is the machine's word
            assert "ollama" not in out.lower() and "✗" not in out, out
            assert "✓ kill switch: off" in out and "✓ dry run: off: posts are sent" in out, out
        admin.set(running_router.keys.kill_switch, json.dumps({"on": True, "by": "owner test", "ts": time.time()}))
        status = agent_cli("status", second)  # read from the switch itself: no wait for the router's beat
        assert status.returncode == 0 and "! kill switch: ON by owner test: nothing is posted" in status.stdout
    finally:
        admin.close()
        agent.stdin.close()
        agent.wait(timeout=30)


def test_status_and_doctor_of_a_stopped_stack_say_what_is_wrong(tmp_path):
    dead_url = f"redis://agent:not-the-password@127.0.0.1:{free_port()}/0"
    env = base_env(REDIS_URL=dead_url, SAFECLAW_LLM_PROVIDER="ollama", OLLAMA_HOST=f"http://127.0.0.1:{free_port()}",
                   REMOTE_BROWSER_SERVER=f"http://127.0.0.1:{free_port()}")
    status = agent_cli("status", env)
    doctor = agent_cli("doctor", env)
    for result in (status, doctor):
        assert result.returncode == 1
        assert "Traceback" not in result.stdout + result.stderr
        assert "not-the-password" not in result.stdout + result.stderr
    assert "✗ Redis at 127.0.0.1:" in status.stdout and "does not answer (connection refused): is SafeClaw " \
        "running? Start it with ./safeclaw" in status.stdout
    assert "Error 111" not in status.stdout + doctor.stdout
    assert "LLM ollama" in status.stdout and "does not answer" in status.stdout
    assert "✗ browser: REMOTE_BROWSER_SERVER" in doctor.stdout
    assert "check(s) failed" in doctor.stdout


def test_status_shows_the_queue_depth_and_that_no_router_is_alive(redis_urls):
    admin = redis_urls.admin_client()
    admin.lpush(redis_urls.keys.command_queue, "{}", "{}")
    admin.close()
    result = agent_cli("status", base_env(REDIS_URL=redis_urls.agent_url))
    assert result.returncode == 1
    assert "✗ no router is alive" in result.stdout and "2 command(s) waiting" in result.stdout


def test_no_redis_url_is_a_clear_line(tmp_path):
    result = agent_cli("status", base_env())
    assert result.returncode == 1
    assert "REDIS_URL is not set" in result.stdout and "./safeclaw" in result.stdout


def test_doctor_flags_an_open_default_user_and_a_lax_acl(tmp_path):
    """A Redis with no ACL at all: doctor must not say the ACL is in force."""
    port = free_port()
    server = subprocess.Popen(["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        deadline = time.monotonic() + 15
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        client.close()
        result = agent_cli("doctor", base_env(REDIS_URL=f"redis://127.0.0.1:{port}/0"))
    finally:
        server.terminate()
        server.wait(timeout=15)
    assert result.returncode == 1
    assert "✗ ACL not in force" in result.stdout and "✗ the Redis default user is on" in result.stdout


def test_status_lines_for_telegram(redis_urls, monkeypatch):
    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "scripted")
    monkeypatch.setenv("REDIS_URL", redis_urls.agent_url)
    settings = load_settings()
    lines = status_lines(settings, build_redis(settings))
    assert lines[0].startswith("✓ LLM scripted") and lines[1].startswith("✓ Redis answers")
    assert any(line.startswith("✗ no router is alive") for line in lines)


def test_agent_heartbeat_is_written_with_a_ttl_and_removed_on_stop(redis_urls, monkeypatch):
    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "scripted")
    monkeypatch.setenv("REDIS_URL", redis_urls.agent_url)  # the agent's own ACL user writes it
    settings = load_settings()
    admin = redis_urls.admin_client()
    key = redis_urls.keys.agent_heartbeat
    try:
        with AgentHeartbeat.from_settings(settings, build_redis(settings), ["console"]):
            deadline = time.monotonic() + 10
            while admin.get(key) is None:
                assert time.monotonic() < deadline, "no agent heartbeat"
                time.sleep(0.02)
            beat = json.loads(admin.get(key))
            assert beat["pid"] == os.getpid() and beat["channels"] == ["console"]
            assert beat["llm_provider"] == "scripted"
            assert 0 < admin.ttl(key) <= 15
        assert admin.get(key) is None
    finally:
        admin.close()


def test_agent_heartbeat_without_redis_is_a_no_op():
    beat = AgentHeartbeat(None, load_settings().keys, {})
    beat.start()
    beat.stop()


def test_status_reads_the_kill_switch_where_it_is_set_not_from_a_heartbeat(redis_urls, monkeypatch):
    """Issue 31, item 1: right after stop-posting (or resume-posting) status showed the router's
    last beat, the old state, for seconds. The heartbeat here says off; the switch says on."""
    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "scripted")
    monkeypatch.setenv("REDIS_URL", redis_urls.agent_url)
    admin = redis_urls.admin_client()
    beat = {"router_id": "r1", "ts": time.time(), "kill_switch": {"on": False}, "dry_run": False}
    admin.set(redis_urls.keys.router_heartbeat("r1"), json.dumps(beat))
    settings = load_settings()
    kill_switch.flip(admin, redis_urls.keys, True, "owner (command line)")
    assert "! kill switch: ON by owner (command line): nothing is posted (./safeclaw resume-posting " \
        "lifts it)" in status_lines(settings, build_redis(settings))
    kill_switch.flip(admin, redis_urls.keys, False, "owner (command line)")
    beat["kill_switch"] = {"on": True, "by": "an old beat"}
    admin.set(redis_urls.keys.router_heartbeat("r1"), json.dumps(beat))
    lines = status_lines(settings, build_redis(settings))
    assert "✓ kill switch: off (./safeclaw stop-posting stops all posting)" in lines, lines
    admin.close()
