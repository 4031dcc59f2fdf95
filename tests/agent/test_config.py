import json

import pytest

from agent.config.settings import check_no_platform_credentials, configure, load_settings
from agent.errors import ConfigError


def scripted_input(answers):
    answers = list(answers)
    asked = []

    def ask(question):
        asked.append(question)
        return answers.pop(0)

    return ask, asked


def test_first_run_copies_the_template(tmp_path, monkeypatch):
    settings = load_settings()
    config = json.loads(settings.config_path.read_text())
    assert config["llm"] == {"provider": "ollama", "model": "llama3.1:8b", "timeout": 120}
    assert settings.timeout == 10 and settings.max_steps == 5
    assert settings.llm.provider == "ollama" and settings.llm.model == "llama3.1:8b"


def test_environment_may_choose_the_provider(monkeypatch):
    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "local")
    settings = load_settings()
    assert settings.llm.provider == "local"
    assert settings.llm.model == "smollm2-135m-instruct"


def test_bad_values_name_the_file_and_key(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"timeout": "soon"}))
    with pytest.raises(ConfigError, match=r"config.json: 'timeout' must be a number"):
        load_settings()
    path.write_text("{broken")
    with pytest.raises(ConfigError, match="config.json is not valid JSON"):
        load_settings()
    assert path.read_text() == "{broken"


def test_platform_credentials_in_the_agent_environment_are_refused():
    with pytest.raises(ConfigError, match="BSKY_PASSWORD, MASTODON_TOKEN must not be"):
        check_no_platform_credentials({"BSKY_PASSWORD": "x", "MASTODON_TOKEN": "y", "HOME": "/"})
    check_no_platform_credentials({"OPENAI_API_KEY": "fine"})


def test_configure_timeout_reasks_bad_input_and_saves(tmp_path):
    path = tmp_path / "config.json"
    ask, asked = scripted_input(["soon", "0", "700", "25"])
    said = []
    configure("timeout", path, ask, said.append)
    assert json.loads(path.read_text())["timeout"] == 25
    assert len(asked) == 4 and "[10]" in asked[0]
    assert any("not a number" in s for s in said) and any("from 1 to 600" in s for s in said)


def test_configure_keeps_default_on_empty_answer(tmp_path):
    path = tmp_path / "config.json"
    ask, _ = scripted_input([""])
    configure("timeout", path, ask, lambda s: None)
    assert json.loads(path.read_text())["timeout"] == 10


def test_configure_llm_validates_provider_and_model(tmp_path):
    path = tmp_path / "config.json"
    ask, asked = scripted_input(["claude", "openai", "bad model", ""])
    configure("llm", path, ask, lambda s: None)
    llm = json.loads(path.read_text())["llm"]
    assert llm["provider"] == "openai" and llm["model"] == "gpt-4o-mini"
    assert "[gpt-4o-mini]" in asked[-1]


def test_unknown_config_key(tmp_path):
    with pytest.raises(ConfigError, match="unknown config key"):
        configure("colour", tmp_path / "c.json", lambda q: "", lambda s: None)


@pytest.mark.parametrize("section", ["browser", "channels"])
@pytest.mark.parametrize("value", [[1, 2], "on", 3])
def test_a_section_that_is_not_an_object_names_the_file_and_key(tmp_path, monkeypatch, section, value):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({section: value}))
    monkeypatch.setenv("SAFECLAW_CONFIG", str(path))
    with pytest.raises(ConfigError, match=f"config.json.*'{section}' must be an object"):
        load_settings()


@pytest.mark.parametrize("body", [
    '{"channels": {"autonomy": {"approve_public_writes": true, "approve_public_writes": false}}}',
    '{"channels": {}, "channels": {"autonomy": {"approve_public_writes": false}}}',
])
def test_a_key_given_twice_stops_the_agent_rather_than_taking_the_last(tmp_path, monkeypatch, body):
    """Two values of one setting in one file disagree: the last would silently win (JSON's rule),
    a weaker value after a stricter one included; the agent refuses the file and names the key."""
    path = tmp_path / "config.json"
    path.write_text(body)
    monkeypatch.setenv("SAFECLAW_CONFIG", str(path))
    with pytest.raises(ConfigError, match="given twice"):
        load_settings()
