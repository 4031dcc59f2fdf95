"""`python agent/start_agent.py --channel telegram` as a service: a real subprocess, SIGTERM, restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent.workspace.folder import Workspace
from tests.support.fake_telegram import FakeTelegram

REPO = Path(__file__).resolve().parents[3]
OWNER = 4242


@pytest.fixture
def fake():
    with FakeTelegram() as server:
        yield server


def start_agent(fake, tmp_path, replies, run):
    config = Path(os.environ["SAFECLAW_CONFIG"])
    config.write_text(json.dumps({
        "llm": {"provider": "scripted"},
        "channels": {"console": {"enabled": False},
                     "telegram": {"enabled": True, "allowed_user_ids": [OWNER]}},
    }))
    replies_file = tmp_path / f"replies-{run}.json"
    replies_file.write_text(json.dumps(replies))
    env = {**os.environ, "SAFECLAW_LLM_PROVIDER": "scripted", "SAFECLAW_SCRIPTED_REPLIES": str(replies_file),
           "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE": fake.url, "REDIS_URL": ""}
    return subprocess.Popen(
        [sys.executable, "agent/start_agent.py", "--channel", "telegram"], cwd=REPO, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def terminate(process):
    """SIGTERM, then the exit code and output; a process that hangs is killed (by its own pid)."""
    process.send_signal(signal.SIGTERM)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the agent did not stop on SIGTERM; stderr: {err}")
    return process.returncode, out, err


def test_service_answers_a_pending_message_once_and_exits_0_on_sigterm(fake, tmp_path):
    first = fake.push_message(OWNER, OWNER, "sent while the agent was down")
    agent = start_agent(fake, tmp_path, ["Hello from the scripted LLM."], run=1)
    try:
        fake.wait_until(lambda: fake.sent_texts(OWNER) or agent.poll() is not None, timeout=60)
    finally:
        code, out, err = terminate(agent)
    assert code == 0, err
    assert fake.sent_texts(OWNER) == ["Hello from the scripted LLM."]
    assert fake.confirmed >= first  # the SIGTERM'd agent confirmed the update it answered
    assert fake.token.split(":")[1] not in out + err

    # A second run neither repeats the old message (its script would be used up) nor misses a new one.
    fake.push_message(OWNER, OWNER, "and now?")
    agent = start_agent(fake, tmp_path, ["Second run, second answer."], run=2)
    try:
        fake.wait_until(lambda: len(fake.sent_texts(OWNER)) >= 2 or agent.poll() is not None, timeout=60)
    finally:
        code, out, err = terminate(agent)
    assert code == 0, err
    assert fake.sent_texts(OWNER) == ["Hello from the scripted LLM.", "Second run, second answer."]
    history = Workspace(Path(os.environ["SAFECLAW_WORKSPACE"])).load_history(f"telegram:{OWNER}")
    assert [(t["user"], t["response"]) for t in history] == [
        ("sent while the agent was down", "Hello from the scripted LLM."),
        ("and now?", "Second run, second answer."),
    ]


def test_config_telegram_from_the_command_line(fake, tmp_path):
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE": fake.url}
    done = subprocess.run(
        [sys.executable, "agent/start_agent.py", "config", "telegram"], cwd=REPO, env=env,
        input="not a number\n4242, 77\n", capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "@safeclaw_test_bot" in done.stdout and "is not a numeric Telegram user id" in done.stdout
    saved = json.loads(Path(os.environ["SAFECLAW_CONFIG"]).read_text())
    assert saved["channels"]["telegram"] == {"enabled": True, "allowed_user_ids": [4242, 77], "allow_groups": False}
    assert fake.token.split(":")[1] not in done.stdout + done.stderr + json.dumps(saved)

    env["TELEGRAM_BOT_TOKEN"] = ""  # empty, not absent: a developer's agent/.env must not fill it in
    missing = subprocess.run([sys.executable, "agent/start_agent.py", "config", "telegram"], cwd=REPO,
                             env=env, input="", capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2
    assert "TELEGRAM_BOT_TOKEN is not set" in missing.stderr and "agent/.env" in missing.stderr
