"""Router settings: loaded once from env + router/.env, clear errors naming the variable."""

import os
import subprocess
import sys

import pytest

from router.config.settings import REPO_ROOT, RateLimit, RouterSettings, parse_rate_limits
from router.errors import ConfigError

URL = "redis://router:pw@127.0.0.1:6379/0"


def test_missing_redis_url_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="REDIS_URL"):
        RouterSettings.load(tmp_path / "none.env", environ={})


def test_env_file_read_and_process_env_wins(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text(f"REDIS_URL={URL}\nROUTER_ID=from-file\nROUTER_MAX_ATTEMPTS=5\n")
    settings = RouterSettings.load(env_file, environ={"ROUTER_ID": "from-env"})
    assert settings.redis_url == URL and settings.router_id == "from-env" and settings.max_attempts == 5
    assert settings.redis_password == "pw"
    assert settings.keys.command_queue == "{safeclaw}:command_queue"  # the hash tag of protocol.keys


def test_custom_queue_names():
    settings = RouterSettings.from_env({"REDIS_URL": URL, "COMMAND_QUEUE": "q", "RESPONSE_PREFIX": "r:"})
    assert settings.keys.command_queue == "q" and settings.keys.response("1") == "r:1"


@pytest.mark.parametrize(
    ("name", "value"),
    [("ROUTER_MAX_ATTEMPTS", "three"), ("ROUTER_MAX_ATTEMPTS", "0"), ("ROUTER_DRY_RUN", "maybe"),
     ("ROUTER_ID", "bad id!"), ("ROUTER_RATE_LIMITS", "NOTE=fast")],
)
def test_bad_values_name_the_variable(name, value):
    with pytest.raises(ConfigError, match=name):
        RouterSettings.from_env({"REDIS_URL": URL, name: value})


def test_rate_limits_parse():
    assert parse_rate_limits("NOTE=30/60, CREATE_POST=5/3600") == {
        "NOTE": RateLimit(30, 60), "CREATE_POST": RateLimit(5, 3600)}


def test_relative_paths_are_from_the_repo_root():
    from router.config.settings import REPO_ROOT
    env = {"REDIS_URL": URL, "ROUTER_DATA_DIR": "router", "ROUTER_LOG_FILE": "/tmp/x.log"}
    settings = RouterSettings.from_env(env)
    assert settings.data_dir == REPO_ROOT / "router" and str(settings.log_file) == "/tmp/x.log"


# A password with an unencoded '/' moves the rest of it into the URL's path, and the part
# before it is then parsed as the port: the URL library's error names that part.
UNENCODED_PASSWORD_URL = "redis://router:pw4Kq9Zz/Tt@127.0.0.1:6379/0"


def test_an_unparsable_redis_url_is_a_config_error_that_names_no_part_of_it():
    with pytest.raises(ConfigError, match="REDIS_URL") as caught:
        RouterSettings.from_env({"REDIS_URL": UNENCODED_PASSWORD_URL})
    assert "pw4Kq9Zz" not in str(caught.value)


def test_start_router_refuses_an_unparsable_redis_url_without_printing_it(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "REDIS_URL": UNENCODED_PASSWORD_URL,
           "ROUTER_LOG_FILE": str(tmp_path / "router.log")}
    done = subprocess.run([sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file",
                           str(tmp_path / "none.env")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "REDIS_URL" in done.stderr
    assert "pw4Kq9Zz" not in done.stderr + done.stdout and "Traceback" not in done.stderr


def test_the_redis_password_to_redact_is_the_decoded_one():
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw4Kq9Zz%2FTt@127.0.0.1:6379/0"})
    assert settings.redis_password == "pw4Kq9Zz/Tt"
