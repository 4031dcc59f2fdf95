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
SENTINEL_SERVICES = {"redis-replica", "sentinel-1", "sentinel-2", "sentinel-3"}  # --profile sentinel
SAFECLAW_SERVICES = ("router", "agent", "autonomy", "dashboard")
SECRET_WORDS = ("PASSWORD=", "TOKEN=", "SECRET=", "API_KEY=", "redis://")


@pytest.fixture
def compose_dir(tmp_path) -> Path:
    """A copy of the compose file beside the files it names, made by compose-init (not the repo's own)."""
    shutil.copyfile(REPO_ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    shutil.copyfile(REPO_ROOT / "compose.sentinel.env", tmp_path / "compose.sentinel.env")
    for name in ("agent", "router"):
        (tmp_path / name).mkdir()
    init(tmp_path)
    return tmp_path


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_names_exactly_the_services():
    services = load(REPO_ROOT / "docker-compose.yml")["services"]
    assert {name for name, service in services.items() if "profiles" not in service} == SERVICES
    assert {name for name, service in services.items() if service.get("profiles") == ["sentinel"]} == (
        SENTINEL_SERVICES)


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
    assert "--aclfile" in " ".join(redis["command"]) and redis["secrets"][0] == "redis_acl"
    # The replication login only (a replica after a failover): no SafeClaw user's password.
    assert redis["secrets"][1:] == ["replica_redis_password"]
    assert "--maxmemory-policy noeviction" in " ".join(redis["command"])


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
    assert set(result.stdout.split()) <= SERVICES | SENTINEL_SERVICES
    assert set(result.stdout.split()) >= SERVICES
    full = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config"], cwd=compose_dir,
                          capture_output=True, text=True, timeout=60)
    assert full.returncode == 0, full.stderr
    parsed = yaml.safe_load(full.stdout)
    assert "ports" not in parsed["services"]["redis"]


def compose_config(compose_dir: Path, *args: str) -> dict:
    full = subprocess.run(["docker-compose", "-f", "docker-compose.yml", *args, "config"], cwd=compose_dir,
                          capture_output=True, text=True, timeout=60)
    assert full.returncode == 0, full.stderr
    return yaml.safe_load(full.stdout)


@pytest.mark.skipif(shutil.which("docker-compose") is None,
                    reason="docker-compose (apt package) not installed; the PyYAML checks above still run")
def test_sentinel_profile_is_one_primary_one_replica_three_sentinels_followed_by_every_process(compose_dir):
    parsed = compose_config(compose_dir, "--env-file", "compose.sentinel.env", "--profile", "sentinel")
    services = parsed["services"]
    assert set(services) >= SENTINEL_SERVICES | SERVICES
    assert "--replicaof redis 6379" in " ".join(services["redis-replica"]["command"])
    for name in ("redis", "redis-replica"):  # fencing: a primary cut off from its replica stops writing
        command = " ".join(services[name]["command"])
        assert "--min-replicas-to-write 1 --min-replicas-max-lag 10" in command
        assert "masteruser replica" in command and "ports" not in services[name]
    for name in ("sentinel-1", "sentinel-2", "sentinel-3"):
        command = " ".join(services[name]["command"])
        assert "sentinel monitor safeclaw redis 6379 2" in command and "--sentinel" in command
        assert services[name]["secrets"] == [{"source": "sentinel_redis_password"}]
        assert "ports" not in services[name]
    for name in SAFECLAW_SERVICES:
        assert services[name]["environment"]["REDIS_SENTINELS"] == (
            "sentinel-1:26379,sentinel-2:26379,sentinel-3:26379")
    assert str(services["router"]["environment"]["ROUTER_REDIS_MIN_REPLICAS"]) == "1"
    run = compose_dir / ".run" / "compose"
    acl = (run / "users.acl").read_text()
    assert "user replica on #" in acl and "user sentinel on #" in acl
    assert (run / "replica.password").read_text().strip() not in acl


@pytest.mark.skipif(shutil.which("docker-compose") is None,
                    reason="docker-compose (apt package) not installed; the PyYAML checks above still run")
def test_without_the_profile_one_redis_asks_for_no_replica(compose_dir):
    services = compose_config(compose_dir)["services"]
    assert "--min-replicas-to-write 0" in " ".join(services["redis"]["command"])
    assert all(services[name]["environment"]["REDIS_SENTINELS"] == "" for name in SAFECLAW_SERVICES)
    assert str(services["router"]["environment"]["ROUTER_REDIS_MIN_REPLICAS"]) == "0"
