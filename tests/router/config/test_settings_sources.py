"""Issue 18, items 8 and 9: configuration fails closed wherever it is read. A name in the router's
own env file that the router does not read stops it (ROUTER-KILL-SWITCH, ROUTERS_…, a Cyrillic
letter, KILL_SWITCH were ignored silently), and a policy setting's sources merge by strictness: an
empty value never weakens one, and two values that disagree give the stricter, said in the log."""

import logging

import pytest

from router.config.settings import RouterSettings
from router.errors import ConfigError

URL = "redis://router:pw@127.0.0.1:6379/0"


def env_file(tmp_path, text: str):
    path = tmp_path / ".env"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "name",
    [
        "ROUTER-KILL-SWITCH",
        "ROUTER.KILL.SWITCH",
        "ROUTERS_KILL_SWITCH",
        "ROUT\u0415R_KILL_SWITCH",  # a Cyrillic Е
        "ROUTER_KILL_SW\u0406TCH",  # a Ukrainian І
        "KILL_SWITCH",
        "REQUIRE_APPROVAL",
        "DRY_RUN",
        "ROUTER_KILL_SWITCH\u200b",  # a zero-width space after it
        "router-require-approval",
        "MASTODON_TOKN",  # a misspelt credential: the platform would quietly not be configured
        "SOMETHING_ELSE",  # any name the router does not read
    ],
)
def test_a_name_in_the_router_env_file_the_router_does_not_read_stops_it(tmp_path, name):
    path = env_file(tmp_path, f"REDIS_URL={URL}\n{name}=true\n")
    with pytest.raises(ConfigError) as caught:
        RouterSettings.load(path, environ={})
    message = str(caught.value)
    assert ".env" in message and "\n" not in message


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("ROUTER-KILL-SWITCH", "ROUTER_KILL_SWITCH"),
        ("ROUTERS_DRY_RUN", "ROUTER_DRY_RUN"),
        ("ROUT\u0415R_KILL_SWITCH", "ROUTER_KILL_SWITCH"),
        ("KILL_SWITCH", "ROUTER_KILL_SWITCH"),
        # the letters of a policy setting with other separators, words or surroundings
        ("KILLSWITCH", "ROUTER_KILL_SWITCH"),
        ("DRYRUN", "ROUTER_DRY_RUN"),
        ("KILL_SWITCH_ROUTER", "ROUTER_KILL_SWITCH"),
        ("SWITCH_KILL", "ROUTER_KILL_SWITCH"),
        ("SAFECLAW_ROUTER_KILL_SWITCH", "ROUTER_KILL_SWITCH"),
        ("R_KILL_SWITCH", "ROUTER_KILL_SWITCH"),
        ("ROUTER__KILL__SWITCH", "ROUTER_KILL_SWITCH"),
        ("\uff2b\uff29\uff2c\uff2c\uff3f\uff33\uff37\uff29\uff34\uff23\uff28", "ROUTER_KILL_SWITCH"),  # full-width
        ("\u039a\u0399LL_SW\u0399TCH", "ROUTER_KILL_SWITCH"),  # Greek capitals
        ("\ufeffDRY_RUN", "ROUTER_DRY_RUN"),
        ("CHATAPPROVALS", "ROUTER_CHAT_APPROVALS"),
        ("APPROVE_TAINTED_WRITE", "ROUTER_APPROVE_TAINTED_WRITES"),
    ],
)
def test_a_near_miss_in_the_process_environment_stops_the_router_and_names_the_setting(name, meant):
    with pytest.raises(ConfigError, match=meant):
        RouterSettings.load(None, environ={"REDIS_URL": URL, name: "true"})


def test_unrelated_names_in_the_process_environment_are_left_alone():
    settings = RouterSettings.load(
        None, environ={"REDIS_URL": URL, "PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "TERM": "xterm",
                       "NPM_CONFIG_DRY_RUN": "true", "TELEGRAM_CHAT_ID": "1", "SWITCH": "x", "KILL": "9"}
    )
    assert settings.kill_switch is False


def test_every_name_the_router_reads_is_accepted_in_its_env_file(tmp_path):
    path = env_file(
        tmp_path,
        f"REDIS_URL={URL}\nROUTER_KILL_SWITCH=false\nMASTODON_INSTANCE=http://127.0.0.1:1\n"
        "MASTODON_TOKEN=t0ken-value-long\nBSKY_SERVICE=http://127.0.0.1:2\nCOMMAND_QUEUE=q\n",
    )
    assert RouterSettings.load(path, environ={}).env["MASTODON_INSTANCE"] == "http://127.0.0.1:1"


@pytest.mark.parametrize("name", ["ROUTER_KILL_SWITCH", "ROUTER_DRY_RUN"])
def test_an_empty_value_in_the_environment_does_not_turn_off_what_the_file_turns_on(tmp_path, name, caplog):
    path = env_file(tmp_path, f"REDIS_URL={URL}\n{name}=true\n")
    with caplog.at_level(logging.WARNING, logger="router.config.env_sources"):
        settings = RouterSettings.load(path, environ={name: ""})
    assert (settings.kill_switch if name == "ROUTER_KILL_SWITCH" else settings.dry_run) is True
    assert any(name in r.getMessage() for r in caplog.records)


def test_the_stricter_kill_switch_holds_whichever_source_gives_it(tmp_path, caplog):
    on_in_file = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_KILL_SWITCH=on\n")
    with caplog.at_level(logging.WARNING, logger="router.config.env_sources"):
        assert RouterSettings.load(on_in_file, environ={"ROUTER_KILL_SWITCH": "false"}).kill_switch is True
    assert any("stricter" in r.getMessage() for r in caplog.records)
    off_in_file = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_KILL_SWITCH=off\n")
    assert RouterSettings.load(off_in_file, environ={"ROUTER_KILL_SWITCH": "1"}).kill_switch is True


def test_chat_approvals_off_in_either_source_stays_off(tmp_path):
    path = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_CHAT_APPROVALS=false\n")
    assert RouterSettings.load(path, environ={"ROUTER_CHAT_APPROVALS": "true"}).chat_approvals is False
    assert RouterSettings.load(path, environ={"ROUTER_CHAT_APPROVALS": ""}).chat_approvals is False


def test_approvals_required_by_either_source_are_all_required(tmp_path):
    path = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_REQUIRE_APPROVAL=*:post\n")
    settings = RouterSettings.load(path, environ={"ROUTER_REQUIRE_APPROVAL": "*:like"})
    assert settings.require_approval == frozenset({"*:post", "*:like"})
    assert RouterSettings.load(path, environ={"ROUTER_REQUIRE_APPROVAL": ""}).require_approval == {"*:post"}


def test_the_stricter_number_holds_for_numeric_bounds(tmp_path):
    path = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_CIRCUIT_FAILURES=3\nROUTER_DUPLICATE_DAYS=7\n")
    settings = RouterSettings.load(path, environ={"ROUTER_CIRCUIT_FAILURES": "9", "ROUTER_DUPLICATE_DAYS": "30"})
    assert settings.bounds.circuit_failures == 3 and settings.bounds.duplicate_days == 30


def test_quotas_that_differ_between_sources_stop_the_router_rather_than_pick_one(tmp_path):
    path = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_QUOTAS=post=2\n")
    with pytest.raises(ConfigError, match="ROUTER_QUOTAS"):
        RouterSettings.load(path, environ={"ROUTER_QUOTAS": "post=50"})
    assert RouterSettings.load(path, environ={"ROUTER_QUOTAS": ""}).bounds.fallback_quotas["post"] == 2


def test_a_non_policy_setting_from_the_environment_still_wins(tmp_path):
    path = env_file(tmp_path, f"REDIS_URL={URL}\nROUTER_REPLY_TTL=60\n")
    assert RouterSettings.load(path, environ={"ROUTER_REPLY_TTL": "120"}).reply_ttl == 120
