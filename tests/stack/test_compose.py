"""docker-compose.yml: parses with a compose implementation, names exactly the services, holds no secret."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from scripts.compose_init import init
from tests.stack.stack_helpers import REPO_ROOT

SERVICES = {"redis", "router", "agent", "autonomy", "dashboard", "browser", "ollama"}
SECRET_WORDS = ("PASSWORD=", "TOKEN=", "SECRET=", "API_KEY=", "redis://")


@pytest.fixture
def compose_dir(tmp_path) -> Path:
    """A copy of the compose file beside the files it names, made by compose-init (not the repo's own)."""
    shutil.copyfile(REPO_ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    for name in ("agent", "router"):
        (tmp_path / name).mkdir()
    init(tmp_path)
    return tmp_path


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_names_exactly_the_services():
    assert set(load(REPO_ROOT / "docker-compose.yml")["services"]) == SERVICES


def test_each_process_gets_only_its_own_env_file_and_secret():
    services = load(REPO_ROOT / "docker-compose.yml")["services"]
    assert services["router"]["env_file"] == ["router/.env"]
    assert services["agent"]["env_file"] == ["agent/.env"]
    assert services["router"]["secrets"] == ["router_redis_password"]
    assert services["agent"]["secrets"] == ["agent_redis_password"]
    assert services["agent"]["stdin_open"] is True and services["agent"]["tty"] is True
    assert services["agent"]["environment"]["REMOTE_BROWSER_SERVER"] == "http://browser:4444"
    for name in ("redis", "browser", "ollama", "dashboard"):
        assert "env_file" not in services[name]
    assert services["dashboard"]["secrets"] == ["control_redis_password", "dashboard_token"]
    assert services["dashboard"]["environment"]["REDIS_USER"] == "control"


def test_dashboard_is_published_on_loopback_only():
    dashboard = load(REPO_ROOT / "docker-compose.yml")["services"]["dashboard"]
    assert all(str(port).startswith("127.0.0.1:") for port in dashboard["ports"])
    assert all(volume.endswith(":ro") for volume in dashboard["volumes"])


def test_a_stuck_autonomy_agent_is_restarted_by_its_healthcheck():
    autonomy = load(REPO_ROOT / "docker-compose.yml")["services"]["autonomy"]
    assert autonomy["command"][-2:] == ["--channel", "autonomy"]
    test = " ".join(autonomy["healthcheck"]["test"])
    assert "start_agent.py autonomy health || kill -TERM 1" in test
    assert autonomy["restart"] == "unless-stopped"
    assert autonomy["env_file"] == ["agent/.env"] and autonomy["secrets"] == ["agent_redis_password"]


def test_redis_is_official_acl_mounted_and_not_published():
    redis = load(REPO_ROOT / "docker-compose.yml")["services"]["redis"]
    assert redis["image"].startswith("redis:") and "ports" not in redis
    assert "--aclfile" in " ".join(redis["command"]) and redis["secrets"] == ["redis_acl"]


def test_no_service_holds_a_credential():
    text = (REPO_ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    for word in SECRET_WORDS:
        assert word not in text
    for service in load(REPO_ROOT / "docker-compose.yml")["services"].values():
        for key, value in (service.get("environment") or {}).items():
            assert not key.endswith(("PASSWORD", "TOKEN", "SECRET", "API_KEY")), key
            assert "@" not in str(value), key


def test_compose_init_makes_a_default_off_acl_and_keeps_passwords(compose_dir):
    run = compose_dir / ".run" / "compose"
    acl = (run / "users.acl").read_text()
    assert acl.startswith("user default off") and "user agent on #" in acl and "user router on #" in acl
    assert "user control on #" in acl and (run / "dashboard.token").read_text().strip()
    passwords = [(run / f"{user}.password").read_text().strip() for user in ("agent", "router")]
    assert all(p and p not in acl for p in passwords)  # the ACL holds hashes only
    init(compose_dir)
    assert [(run / f"{user}.password").read_text().strip() for user in ("agent", "router")] == passwords
    assert "ROUTER_DRY_RUN=true" in (compose_dir / "router" / ".env").read_text()


def test_docker_ignore_keeps_secrets_out_of_the_image():
    ignored = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    for pattern in ("**/.env", ".run/", ".venv/", "agent/config.json", "router/outbox.jsonl", "logs/"):
        assert pattern in ignored
    instructions = [line for line in (REPO_ROOT / "Dockerfile").read_text().splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
    assert not any(line.startswith("COPY . ") or ".env" in line for line in instructions)


@pytest.mark.skipif(shutil.which("docker-compose") is None,
                    reason="docker-compose (apt package) not installed; the PyYAML checks above still run")
def test_parses_with_docker_compose(compose_dir):
    result = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config", "--services"],
                            cwd=compose_dir, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == SERVICES
    full = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config"], cwd=compose_dir,
                          capture_output=True, text=True, timeout=60)
    assert full.returncode == 0, full.stderr
    parsed = yaml.safe_load(full.stdout)
    assert "ports" not in parsed["services"]["redis"]
