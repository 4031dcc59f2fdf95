"""`channels.bluesky` in config.json: refused with a fix when wrong, its defaults, the URL
variable, and the listener the service builds from it."""

import json

import pytest

from agent.channels.bluesky import BlueskyListener
from agent.channels.bluesky_cursor import STATE_FILE
from agent.config.channel_sections import BlueskySettings
from agent.config.reader import Section
from agent.config.settings import load_settings
from agent.errors import ConfigError
from agent.service import AgentService
from tests.agent.channels.bluesky_helpers import OWNER, Recorder


@pytest.mark.parametrize(("conf", "expected"), [
    ({"watch": ["alice.bsky.social"]}, "is not a DID. Handles are not accepted"),
    ({"watch": ["@alice.bsky.social"]}, "is not a DID"),
    ({"watch": []}, "must list your account's DID"),
    ({}, "must list your account's DID"),
    ({"watch": OWNER}, "c.json: 'channels.bluesky.watch' must be a list of DIDs"),
    ({"watch": [OWNER], "max_per_hour": True}, "max_per_hour"),
    ({"watch": [OWNER], "max_per_hour": 0}, "max_per_hour"),
    ({"watch": [OWNER], "jetstream_url": "https://jetstream.example"}, "must start with wss://"),
    ({"watch": [OWNER], "wacth": [OWNER]}, "'channels.bluesky.wacth' is not a setting SafeClaw knows"),
    ([OWNER], "'channels.bluesky' must be an object"),
])
def test_bad_configuration_is_refused_with_a_fix(conf, expected, workspace):
    with pytest.raises(ConfigError, match=expected):
        settings = parse_bluesky(conf)
        BlueskyListener.from_settings(Recorder(), settings, workspace)


def parse_bluesky(conf, env=None):
    return BlueskySettings.parse(Section({"bluesky": conf}, "c.json", "channels").child("bluesky"), env or {})


def test_configuration_defaults_and_the_url_variable():
    config = parse_bluesky({"watch": [OWNER]})
    assert (config.watch, config.max_per_hour) == (frozenset({OWNER}), 20)
    assert config.jetstream_url == "wss://jetstream2.us-east.bsky.network/subscribe"
    overridden = parse_bluesky({"watch": [OWNER], "jetstream_url": "wss://a.example/subscribe"},
                               {"BSKY_JETSTREAM_URL": "ws://127.0.0.1:1/subscribe"})
    assert overridden.jetstream_url == "ws://127.0.0.1:1/subscribe"


def test_the_service_builds_the_listener_from_config_json(workspace, tmp_path):
    from agent.config.settings import CONFIG_TEMPLATE

    shipped = json.loads(CONFIG_TEMPLATE.read_text())["channels"]["bluesky"]
    assert shipped["enabled"] is False and shipped["watch"] == []
    config = json.loads(CONFIG_TEMPLATE.read_text())
    config["channels"]["bluesky"] = {"enabled": True, "watch": [OWNER], "max_per_hour": 5}
    (tmp_path / "config.json").write_text(json.dumps(config))
    settings = load_settings({"SAFECLAW_CONFIG": str(tmp_path / "config.json"),
                              "SAFECLAW_WORKSPACE": str(workspace.root), "BSKY_JETSTREAM_URL": "ws://127.0.0.1:1/x"})
    channel = AgentService(settings, None).make_channel("bluesky")  # type: ignore[arg-type]
    assert isinstance(channel, BlueskyListener)
    assert channel.config.max_per_hour == 5 and channel.config.jetstream_url == "ws://127.0.0.1:1/x"
    assert channel.resume.state_path == workspace.root / STATE_FILE
