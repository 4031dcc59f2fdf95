"""Typed settings: every section parsed once in agent/config/settings.py, errors naming the file and the key,
the environment read there and nowhere else in the agent."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from agent.config.channel_sections import BlueskySettings, ChannelSettings
from agent.config.sections import BrowserSettings, LLMSettings
from agent.config.settings import CONFIG_TEMPLATE, load_settings, settings_from_config
from agent.errors import ConfigError

AGENT = Path(__file__).resolve().parents[2] / "agent"
OWNER_DID = "did:plc:owner1234"


def write_config(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def test_the_shipped_template_parses_into_typed_sections(tmp_path):
    data = json.loads(CONFIG_TEMPLATE.read_text())
    settings = settings_from_config(data, tmp_path / "config.json", {})
    assert settings.llm == LLMSettings(provider="ollama", model="llama3.1:8b", timeout=120.0)
    assert settings.browser == BrowserSettings(
        allow_private_addresses=False, page_load_timeout=20, total_timeout=45
    )
    assert isinstance(settings.channels, ChannelSettings)
    assert settings.channels.enabled() == ["console"]
    assert settings.channels.telegram.allowed_user_ids == frozenset()
    assert settings.channels.bluesky == BlueskySettings(where=str(tmp_path / "config.json"))


@pytest.mark.parametrize(
    ("data", "key", "must"),
    [
        ({"browser": {"total_timeout": "long"}}, "browser.total_timeout", "a number from 1 to 3600"),
        ({"browser": {"allow_private_addresses": "yes"}}, "browser.allow_private_addresses", "true or false"),
        ({"browser": {"page_load_timeout": 0}}, "browser.page_load_timeout", "a number from 1 to 600"),
        ({"llm": {"timeout": True}}, "llm.timeout", "a number"),
        ({"llm": {"model": 7}}, "llm.model", "a string"),
        ({"llm": []}, "llm", "an object"),
        ({"channels": {"console": {"enabled": 1}}}, "channels.console.enabled", "true or false"),
        ({"channels": {"telegram": "on"}}, "channels.telegram", "an object"),
        (
            {"channels": {"telegram": {"allowed_user_ids": ["1"]}}},
            "channels.telegram.allowed_user_ids",
            "a list",
        ),
        ({"channels": {"bluesky": {"max_per_hour": 2.5}}}, "channels.bluesky.max_per_hour", "a whole number"),
        ({"channels": {"bluesky": {"watch": ["alice.bsky.social"]}}}, "channels.bluesky.watch", ""),
        ({"max_steps": 1.5}, "max_steps", "a whole number from 1 to 50"),
    ],
)
def test_a_bad_value_names_the_file_and_the_dotted_key(tmp_path, data, key, must):
    path = write_config(tmp_path, data)
    with pytest.raises(ConfigError) as caught:
        load_settings({"SAFECLAW_CONFIG": str(path)})
    message = str(caught.value)
    assert message.startswith(f"{path}: '{key}'"), message
    assert must in message


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"browsr": {}}, "browsr"),
        ({"browser": {"allow_private_adresses": True}}, "browser.allow_private_adresses"),
        ({"llm": {"provder": "openai"}}, "llm.provder"),
        ({"channels": {"telegarm": {"enabled": True}}}, "channels.telegarm"),
        ({"channels": {"bluesky": {"max_per_hours": 5}}}, "channels.bluesky.max_per_hours"),
    ],
)
def test_an_unknown_key_is_refused_not_ignored(tmp_path, data, key):
    path = write_config(tmp_path, data)
    with pytest.raises(ConfigError, match=rf"{path}: '{key}' is not a setting SafeClaw knows.*known in"):
        load_settings({"SAFECLAW_CONFIG": str(path)})


def test_a_bot_token_in_config_json_is_refused_with_the_fix(tmp_path):
    path = write_config(tmp_path, {"channels": {"telegram": {"token": "123:abc"}}})
    with pytest.raises(
        ConfigError, match=r"'channels.telegram.token' must not be there.*agent/.env"
    ) as caught:
        load_settings({"SAFECLAW_CONFIG": str(path)})
    assert "123:abc" not in str(caught.value)


def test_the_environment_completes_and_overrides_each_section_once(tmp_path):
    path = write_config(
        tmp_path,
        {
            "llm": {"provider": "openai", "model": "gpt-x"},
            "channels": {"bluesky": {"jetstream_url": "wss://a.example/s"}},
        },
    )
    env = {
        "SAFECLAW_CONFIG": str(path),
        "OLLAMA_HOST": "gpu-box",
        "OPENAI_API_KEY": "sk-test-1",
        "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
        "GOOGLE_API_KEY": "g-key-1",
        "REMOTE_BROWSER_SERVER": " http://127.0.0.1:4444 ",
        "SAFECLAW_CHROMIUM": "/opt/chromium",
        "TELEGRAM_BOT_TOKEN": "tok-en",
        "TELEGRAM_API_BASE": "http://127.0.0.1:2",
        "BSKY_JETSTREAM_URL": "ws://127.0.0.1:3/subscribe",
        "REDIS_URL": "redis://agent:pw-123456@h:1/0",
    }
    settings = load_settings(env)
    assert (settings.llm.provider, settings.llm.model) == ("openai", "gpt-x")
    assert settings.llm.ollama_host == "http://gpu-box:11434"
    assert settings.llm.openai_api_key == "sk-test-1" and settings.llm.gemini_api_key == "g-key-1"
    assert settings.browser.remote_server == "http://127.0.0.1:4444"
    assert settings.browser.chromium == "/opt/chromium"
    assert settings.channels.telegram.bot_token == "tok-en"
    assert settings.channels.telegram.api_base == "http://127.0.0.1:2"
    assert settings.channels.bluesky.jetstream_url == "ws://127.0.0.1:3/subscribe"
    assert sorted(settings.secrets()) == sorted(["sk-test-1", "g-key-1", "tok-en", "pw-123456"])
    shown = repr(settings)
    for secret in settings.secrets():
        assert secret not in shown


def test_the_provider_override_drops_a_model_meant_for_another_provider(tmp_path):
    path = write_config(tmp_path, {"llm": {"provider": "openai", "model": "gpt-x"}})
    settings = load_settings({"SAFECLAW_CONFIG": str(path), "SAFECLAW_LLM_PROVIDER": "gemini"})
    assert (settings.llm.provider, settings.llm.model) == ("gemini", "gemini-2.5-flash")
    with pytest.raises(ConfigError, match="SAFECLAW_LLM_PROVIDER 'claude' is not one of"):
        load_settings({"SAFECLAW_CONFIG": str(path), "SAFECLAW_LLM_PROVIDER": "claude"})


def environment_reads(source: str) -> list[int]:
    """Lines of `source` that read the process environment: os.environ, os.getenv, os.environb."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb"):
            found.append(node.lineno)
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in ("environ", "getenv") for a in node.names)
        ):
            found.append(node.lineno)
    return found


def test_only_the_settings_loader_reads_the_environment():
    readers = {
        str(path.relative_to(AGENT)): lines
        for path in sorted(AGENT.rglob("*.py"))
        if (lines := environment_reads(path.read_text(encoding="utf-8")))
    }
    loader = "config/settings.py"
    assert readers == {loader: readers.get(loader, [])}, readers
    assert len(readers[loader]) == 1  # read_environment(), called once by each entry point
