"""`python agent/start_agent.py config telegram`: token check with getMe, allowlist, config.json."""

from __future__ import annotations

import json

import pytest

from agent.channels.telegram_setup import bot_urls, configure_telegram, parse_user_ids
from agent.config.channel_sections import TelegramSettings
from agent.config.reader import Section
from agent.errors import ConfigError
from tests.support.fake_telegram import FakeTelegram


@pytest.fixture
def fake():
    with FakeTelegram() as server:
        yield server


class Script:
    """Answers questions from a list and keeps everything said."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.questions: list[str] = []
        self.said: list[str] = []

    def ask(self, question):
        self.questions.append(question)
        return self.answers.pop(0)

    def say(self, text):
        self.said.append(text)


def env_for(fake, **overrides):
    env = {"TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE": fake.url, **overrides}
    return TelegramSettings.from_env(env)


def test_checks_the_token_reasks_bad_ids_and_saves_without_the_token(fake, tmp_path):
    config = tmp_path / "config.json"
    script = Script("", "abc", "12, -5", "111, 222 111")
    configure_telegram(config, env_for(fake), script.ask, script.say)

    saved = json.loads(config.read_text())
    assert saved["channels"]["telegram"] == {"enabled": True, "allowed_user_ids": [111, 222], "allow_groups": False}
    assert saved["channels"]["console"] == {"enabled": True}  # the rest of the template is kept
    assert fake.token not in config.read_text() and fake.token.split(":")[1] not in config.read_text()
    assert [c.method for c in fake.calls][:1] == ["getMe"]
    assert len(script.questions) == 4  # empty, 'abc' and '-5' were each asked again
    assert any("@safeclaw_test_bot" in line for line in script.said)
    assert any("'abc' is not a numeric Telegram user id" in line for line in script.said)
    assert any("'-5' is not a numeric" in line for line in script.said)
    assert not any(fake.token in line for line in script.said)


def test_current_ids_are_the_default_and_a_token_in_config_is_removed(fake, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"channels": {"telegram": {
        "enabled": False, "allowed_user_ids": [5, 6], "token": fake.token}}}))
    script = Script("")
    configure_telegram(config, env_for(fake), script.ask, script.say)
    assert script.questions == ["Allowed user ids, comma-separated [5, 6]: "]
    saved = json.loads(config.read_text())["channels"]["telegram"]
    assert saved == {"enabled": True, "allowed_user_ids": [5, 6]}
    assert fake.token not in config.read_text()
    assert any("token belongs in agent/.env" in line for line in script.said)


WELL_FORMED_WRONG = "42424242:" + "AAwrongButWellFormedToken_0123456789"  # fake; split so scanners skip it


@pytest.mark.parametrize(("overrides", "message"), [
    ({"TELEGRAM_BOT_TOKEN": ""}, r"TELEGRAM_BOT_TOKEN is not set.*agent/\.env"),
    ({"TELEGRAM_BOT_TOKEN": "oops"}, "does not look like a bot token"),
    ({"TELEGRAM_BOT_TOKEN": WELL_FORMED_WRONG}, "rejected the token in TELEGRAM_BOT_TOKEN"),
    ({"TELEGRAM_API_BASE": "ftp://x"}, "TELEGRAM_API_BASE must be an http"),
])
def test_a_missing_or_bad_token_is_a_clear_error_and_nothing_is_saved(fake, tmp_path, overrides, message):
    config = tmp_path / "config.json"
    original = {"channels": {"telegram": {"enabled": False, "allowed_user_ids": []}}}
    config.write_text(json.dumps(original))
    script = Script()
    with pytest.raises(ConfigError, match=message) as caught:
        configure_telegram(config, env_for(fake, **overrides), script.ask, script.say)
    assert json.loads(config.read_text()) == original
    assert script.questions == []
    assert WELL_FORMED_WRONG.split(":")[1] not in str(caught.value)


def test_an_unreachable_api_is_a_clear_error(tmp_path):
    with FakeTelegram() as gone:
        base = gone.url
    with pytest.raises(ConfigError, match="cannot check the bot token"):
        env = TelegramSettings.from_env({"TELEGRAM_BOT_TOKEN": gone.token, "TELEGRAM_API_BASE": base})
        configure_telegram(tmp_path / "config.json", env, Script().ask, Script().say)


def test_parse_user_ids():
    assert parse_user_ids(" 1, 2,3  4 ") == [1, 2, 3, 4]
    assert parse_user_ids("7,7") == [7]
    for bad in ("", "x", "1.5", "0", "-3", "1;2"):
        with pytest.raises(ValueError):
            parse_user_ids(bad)


def parse_telegram(conf, env=None):
    return TelegramSettings.parse(Section(conf, "c.json", "channels.telegram"), env or {})


def test_allowed_user_ids_and_urls():
    assert parse_telegram({"allowed_user_ids": [1, 2]}).allowed_user_ids == {1, 2}
    assert parse_telegram({}).allowed_user_ids == frozenset()
    for bad in (["1"], [True], "1", [1.0], None):
        with pytest.raises(ConfigError, match="c.json: 'channels.telegram.allowed_user_ids' must be a list"):
            parse_telegram({"allowed_user_ids": bad})
    assert bot_urls(parse_telegram({})) is None
    based = parse_telegram({}, {"TELEGRAM_API_BASE": "http://h:1/"})
    assert bot_urls(based) == ("http://h:1/bot", "http://h:1/file/bot")
