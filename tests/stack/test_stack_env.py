"""What each child of `./safeclaw` gets in its environment, and the bootstrap's fast path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from scripts.stack_env import DEFAULT_ROUTER_ID, agent_environment, router_environment, write_runtime_env
from tests.stack.stack_helpers import REPO_ROOT

SHELL = {"PATH": "/usr/bin", "OPENAI_API_KEY": "sk-planted-openai-key-000000000000",
         "TELEGRAM_BOT_TOKEN": "t0k", "BSKY_HANDLE": "me.bsky.social", "BSKY_PASSWORD": "planted-bsky-pass",
         "ROUTER_KILL_SWITCH": "false"}


def test_the_agent_never_gets_a_platform_credential():
    env = agent_environment(SHELL, "redis://agent:pw@127.0.0.1:1/0", "local")
    every = {n for names in PLATFORM_CREDENTIAL_VARIABLES.values() for n in names}
    assert not every & set(env) and "planted-bsky-pass" not in env.values()
    assert env["REDIS_URL"] == "redis://agent:pw@127.0.0.1:1/0" and env["SAFECLAW_LLM_PROVIDER"] == "local"
    assert env["OPENAI_API_KEY"] == SHELL["OPENAI_API_KEY"] and "ROUTER_KILL_SWITCH" not in env


def test_the_router_gets_credentials_but_not_the_agents_secrets():
    env, dry_run = router_environment(SHELL, {}, "redis://router:pw@127.0.0.1:1/0")
    assert env["BSKY_PASSWORD"] == "planted-bsky-pass" and env["REDIS_URL"].startswith("redis://router:")
    assert "OPENAI_API_KEY" not in env and "TELEGRAM_BOT_TOKEN" not in env
    assert dry_run is False and env["ROUTER_DRY_RUN"] == "false"  # bsky has its credentials
    assert env["ROUTER_ID"] == DEFAULT_ROUTER_ID


def test_dry_run_is_on_by_default_without_credentials_and_router_env_can_switch_it():
    env, dry_run = router_environment({"PATH": "/usr/bin"}, {}, "redis://router:pw@h:1/0")
    assert dry_run is True and env["ROUTER_DRY_RUN"] == "true"
    env, dry_run = router_environment({"PATH": "/usr/bin"}, {"ROUTER_DRY_RUN": "false"}, "redis://router:pw@h:1/0")
    assert dry_run is False and "ROUTER_DRY_RUN" not in env  # router/.env decides, untouched


def test_the_router_env_file_redis_url_is_overridden_by_the_private_one():
    env, _ = router_environment({"REDIS_URL": "redis://agent:x@h:1/0"}, {}, "redis://router:pw@h:2/0")
    assert env["REDIS_URL"] == "redis://router:pw@h:2/0"


def test_runtime_env_file_is_private(tmp_path):
    path = tmp_path / "run" / "agent.env"
    write_runtime_env(path, {"REDIS_URL": "redis://agent:pw@h:1/0"})
    assert path.stat().st_mode & 0o077 == 0
    assert "REDIS_URL=redis://agent:pw@h:1/0" in path.read_text()


def test_bootstrap_execs_the_runner_when_install_is_skipped():
    env = {**os.environ, "SAFECLAW_SKIP_INSTALL": "1"}
    result = subprocess.run([str(REPO_ROOT / "safeclaw"), "--help"], capture_output=True, text=True, env=env,
                            cwd="/", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: ./safeclaw" in result.stdout and "status" in result.stdout


def test_bootstrap_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(REPO_ROOT / "safeclaw")]).returncode == 0
    assert os.access(REPO_ROOT / "safeclaw", os.X_OK)


def test_the_agent_never_gets_the_routers_redis_login():
    router_url = "redis://router:planted-router-redis-pass@127.0.0.1:1/0"
    env = agent_environment({**SHELL, "SAFECLAW_ROUTER_REDIS_URL": router_url}, "redis://agent:pw@h:1/0", None)
    assert "planted-router-redis-pass" not in "".join(env.values())


@pytest.mark.slow
def test_a_venv_whose_creation_a_ctrl_c_cut_short_is_finished_at_the_next_run(tmp_path):
    """A Ctrl-C during the first run's `python -m venv` leaves its python without pip (made here
    with --without-pip). Before: every later run stopped at '.venv/bin/pip: No such file or
    directory' until the folder was deleted by hand. Offline (no index): the install that follows
    fails as it must, after the venv was finished."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {**os.environ, "VENV": str(venv), "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("SAFECLAW_SKIP_INSTALL", None)
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), "mcp"], env=env, cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)
    assert "No such file" not in done.stderr, done.stderr
    assert done.returncode == 1 and "pip install failed" in done.stderr, done.stderr
    assert subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"],
                          capture_output=True).returncode == 0
