"""Fail closed on configuration: a router setting that is unknown, misspelt, in another case, out
of range or not plainly a value stops the router with one line naming it; nothing silently
falls back to a default (which for the kill switch or approvals would be *open*)."""

import pytest

from router.config.settings import RouterSettings
from router.errors import ConfigError
from tests.router.router_helpers import RouterProcess, router_env

URL = "redis://router:pw@127.0.0.1:6379/0"
YEAR_AND_A_DAY = str(366 * 24 * 3600)
HUGE = "1" + "0" * 17  # past what Redis accepts as an expiry in seconds


def load(**env: str) -> RouterSettings:
    return RouterSettings.from_env({"REDIS_URL": URL, **env})


@pytest.mark.parametrize(
    "name",
    [
        "router_kill_switch",  # the right setting in another case
        "Router_Kill_Switch",
        "ROUTER_KILLSWITCH",  # a typo
        "ROUTER_KILL_SWITCH_",
        "ROUTER_REQUIRE_APPROVALS",
        "router_require_approval",
        "ROUTER_QUOTA",
        "ROUTER_DRYRUN",
        "ROUTER_NEW_ACCOUNT",
    ],
)
def test_a_setting_name_the_router_does_not_know_stops_it_naming_the_name(name):
    with pytest.raises(ConfigError) as caught:
        load(**{name: "true"})
    assert name in str(caught.value) and "\n" not in str(caught.value)


def test_a_near_miss_name_says_which_setting_was_meant():
    with pytest.raises(ConfigError, match="ROUTER_KILL_SWITCH"):
        load(router_kill_switch="1")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROUTER_REPLY_TTL", HUGE),
        ("ROUTER_REPLY_TTL", YEAR_AND_A_DAY),
        ("ROUTER_DEAD_LETTER_TTL", HUGE),
        ("ROUTER_APPROVAL_TTL", HUGE),
        ("ROUTER_HEARTBEAT_TTL", HUGE),
        ("ROUTER_MAX_ATTEMPTS", "1000000"),
        ("ROUTER_PLATFORM_CONCURRENCY", "100000"),  # a thread each
        ("ROUTER_PLATFORM_BACKLOG", HUGE),
        ("ROUTER_DEAD_LETTER_MAX", HUGE),
        ("ROUTER_AUDIT_MAX_BYTES", "1" + "0" * 30),
        ("ROUTER_CIRCUIT_OPEN_SECONDS", HUGE),
        ("ROUTER_CIRCUIT_FAILURES", HUGE),
        ("ROUTER_DUPLICATE_DAYS", HUGE),
        ("ROUTER_QUOTAS", f"post={HUGE}"),
        ("ROUTER_PACING", f"bsky:post={HUGE}"),
        ("ROUTER_RATE_LIMITS", f"NOTE=5/{HUGE}"),
        ("ROUTER_RATE_LIMITS", f"NOTE={HUGE}/60"),
        # Python's int() takes these; a setting should not
        ("ROUTER_REPLY_TTL", "+60"),
        ("ROUTER_REPLY_TTL", "1_000"),
        ("ROUTER_REPLY_TTL", "\uff16\uff10"),  # full-width 60
        ("ROUTER_MAX_ATTEMPTS", "\u0663"),  # Arabic-Indic 3
        ("ROUTER_REPLY_TTL", "NaN"),
        ("ROUTER_REPLY_TTL", "-5"),
        ("ROUTER_REPLY_TTL", "60.0"),
        ("ROUTER_LOG_LEVEL", "LOUD"),
        ("ROUTER_LOG_LEVEL", "5"),
        # the same scope twice with two values: which did the owner mean?
        ("ROUTER_QUOTAS", "moltbook:post=3,moltbook:post=300"),
        ("ROUTER_PACING", "x:reply=60, x:reply=0"),
        ("ROUTER_RATE_LIMITS", "NOTE=1/60,NOTE=100/60"),
    ],
)
def test_a_value_out_of_range_or_not_plainly_a_value_stops_the_router_naming_the_setting(name, value):
    with pytest.raises(ConfigError) as caught:
        load(**{name: value})
    assert name in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("value", ["1", "true", " true", "TRUE", "True ", "yes", "on", "ON"])
def test_every_spelling_of_on_turns_the_kill_switch_on(value):
    assert load(ROUTER_KILL_SWITCH=value).kill_switch is True


@pytest.mark.parametrize("value", ["y", "enabled", "ture", "2", "-1", "\uff11", "true\u200b", "on!", "null"])
def test_a_kill_switch_value_that_is_neither_on_nor_off_stops_the_router(value):
    with pytest.raises(ConfigError, match="ROUTER_KILL_SWITCH"):
        load(ROUTER_KILL_SWITCH=value)


def test_plain_values_in_range_still_load():
    settings = load(
        ROUTER_REPLY_TTL=" 600 ",
        ROUTER_LOG_LEVEL="debug",
        ROUTER_PLATFORM_CONCURRENCY="8",
        ROUTER_QUOTAS="post=0,moltbook:post=2",
        ROUTER_RATE_LIMITS="NOTE=30/60",
    )
    assert (settings.reply_ttl, settings.log_level, settings.platform_concurrency) == (600, "DEBUG", 8)


def test_the_router_process_stops_with_one_line_naming_a_misspelt_setting(redis_urls, tmp_path):
    env = router_env(redis_urls.router_url, tmp_path, router_kill_switch="true")
    process = RouterProcess(env)
    code = process.wait(timeout=60)
    err = process.log_path.read_text()
    assert code == 2, err
    assert "router_kill_switch" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("ROUTER_KILL_SWITCH true\n", "line 1"),  # no '=': python-dotenv skips it with a warning
        ("# the switch\nROUTER_KILL_SWITCH: true\n", "line 2"),
        ("ROUTER_DRY_RUN\n", "ROUTER_DRY_RUN"),  # a name with no value at all
        ('ROUTER_HEARTBEAT_TTL="15\n', "line 1"),  # an unclosed quote
        ("ROUTER_KILL_SWITCH=true\nROUTER_KILL_SWITCH=false\n", "ROUTER_KILL_SWITCH"),  # which one?
        ('"ROUTER_KILL_SWITCH"=true\n', "ROUTER_KILL_SWITCH"),  # a quoted name
        ("BSKY_PASSWORD hunter2-secret-value\n", "line 1"),
    ],
)
def test_a_line_of_the_env_file_that_cannot_be_read_stops_the_router_naming_it(tmp_path, content, named):
    env_file = tmp_path / ".env"
    env_file.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        RouterSettings.load(env_file, {"REDIS_URL": URL})
    message = str(caught.value)
    assert named in message and "\n" not in message
    assert "hunter2-secret-value" not in message


def test_an_env_file_that_is_not_utf8_stops_the_router(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_bytes("ROUTER_KILL_SWITCH=true\n".encode("utf-16"))
    with pytest.raises(ConfigError, match=".env"):
        RouterSettings.load(env_file, {"REDIS_URL": URL})


def test_a_plain_env_file_with_comments_and_the_same_value_twice_loads(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# router\n\nROUTER_KILL_SWITCH=true  # for now\nexport ROUTER_DRY_RUN=1\nROUTER_DRY_RUN=1\n",
        encoding="utf-8",
    )
    settings = RouterSettings.load(env_file, {"REDIS_URL": URL})
    assert settings.kill_switch and settings.dry_run


def test_the_one_shot_cli_refuses_an_env_file_line_it_would_skip(tmp_path):
    import io
    import json

    from router.social.cli import main

    env_file = tmp_path / ".env"
    env_file.write_text("ROUTER_KILL_SWITCH true\n", encoding="utf-8")
    out = io.StringIO()
    code = main(
        io.StringIO('{"command": "post", "platform": "bsky", "text": "hi"}'),
        out,
        {"ROUTER_ENV_FILE": str(env_file)},
    )
    answer = json.loads(out.getvalue())
    assert code == 1 and answer["success"] is False and "line 1" in answer["message"]
