"""ScriptedLLM, create_llm and choose_provider."""

import json
import subprocess
import sys

import pytest

from agent.config.sections import LLMSettings
from agent.errors import ConfigError, LLMError
from agent.llm import PROVIDERS, create_llm
from agent.llm.base import BaseLLM
from agent.llm.scripted.llm import ScriptedLLM
from agent.llm.select import choose_provider
from tests.support.fake_ollama import FakeOllama

DEAD = "127.0.0.1:9"  # discard port: nothing listens


def test_scripted_replays_in_order_records_prompts_and_raises_queued_errors():
    llm = ScriptedLLM(["one"])
    llm.enqueue(LLMError("scripted", "planned outage"), "two")
    assert llm.chat("p1") == "one"
    with pytest.raises(LLMError, match="planned outage"):
        llm.chat("p2")
    assert llm.chat("p3") == "two"
    with pytest.raises(LLMError, match="script exhausted"):
        llm.chat("p4")
    assert llm.prompts == ["p1", "p2", "p3", "p4"]


def test_create_llm_builds_each_provider_lazily(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["scripted hello"]))
    env = {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k", "SAFECLAW_SCRIPTED_REPLIES": str(replies)}
    built = {name: create_llm(LLMSettings.from_env(env, provider=name)) for name in PROVIDERS}
    assert {name: llm.name for name, llm in built.items()} == {name: name for name in PROVIDERS}
    assert all(isinstance(llm, BaseLLM) for llm in built.values())
    assert built["ollama"].model == "llama3.1:8b"
    assert built["local"].prompt_template == "PROMPT_local.md"
    assert built["ollama"].prompt_template == "PROMPT.md"
    assert built["scripted"].chat("x") == "scripted hello"


def test_unknown_provider_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError) as caught:
        create_llm(LLMSettings(provider="claude-please"))
    for name in PROVIDERS:
        assert name in str(caught.value)


@pytest.mark.parametrize(("content", "problem"), [
    (None, "cannot read"),
    ("[not json", "not valid JSON"),
    ('{"a": 1}', "list of strings"),
    ('["ok", 3]', "list of strings"),
])
def test_a_bad_scripted_replies_file_is_a_config_error_naming_it(tmp_path, content, problem):
    path = tmp_path / "replies.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=problem) as caught:
        create_llm(LLMSettings(provider="scripted", scripted_replies=str(path)))
    assert str(path) in str(caught.value)


def test_scripted_without_a_replies_file_starts_empty():
    llm = create_llm(LLMSettings(provider="scripted"))
    with pytest.raises(LLMError, match="script exhausted"):
        llm.chat("x")


def test_choose_keeps_ollama_when_it_answers():
    with FakeOllama() as fake:
        assert choose_provider(LLMSettings.from_env({"OLLAMA_HOST": fake.url})) == ("ollama", None)
        assert any(r.path == "/api/tags" for r in fake.requests)


def test_choose_falls_back_to_local_when_ollama_is_dead_and_no_key_is_set():
    provider, reason = choose_provider(LLMSettings.from_env({"OLLAMA_HOST": DEAD}))
    assert provider == "local"
    assert reason and "127.0.0.1:9" in reason and "ollama serve" in reason


@pytest.mark.parametrize("key", ["OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_choose_keeps_ollama_when_a_cloud_key_is_set(key):
    assert choose_provider(LLMSettings.from_env({"OLLAMA_HOST": DEAD, key: "x"})) == ("ollama", None)


@pytest.mark.parametrize("configured", ["openai", "gemini", "local", "scripted"])
def test_choose_never_overrides_another_configured_provider(configured):
    settings = LLMSettings.from_env({"OLLAMA_HOST": DEAD}, provider=configured)
    assert choose_provider(settings) == (configured, None)


def test_select_cli_prints_provider_on_stdout_and_reason_on_stderr():
    env = {"OLLAMA_HOST": DEAD, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "agent.llm.select", "ollama"], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == "local\n"
    assert "embedded model" in done.stderr
    usage = subprocess.run([sys.executable, "-m", "agent.llm.select"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage" in usage.stderr
