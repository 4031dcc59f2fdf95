"""chat_json: each provider asks in its native JSON mode at temperature 0, and every answer is checked."""

import importlib.util
import json

import pytest

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.gemini.llm import GeminiLLM
from agent.llm.local.llama_models import json_grammar
from agent.llm.local.llm import LocalLLM
from agent.llm.local.model_file import shipped_model_path
from agent.llm.ollama.llm import OllamaLLM
from agent.llm.openai.llm import OpenAILLM
from agent.llm.scripted.llm import ScriptedLLM
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
KEY = "sk-test-" + "structured-0000"


def settings(provider, model, timeout=2.0, **env):
    return LLMSettings.from_env(env, provider=provider, model=model, timeout=timeout)


def test_openai_sends_a_strict_json_schema_response_format_at_temperature_0():
    with FakeOpenAI() as fake:
        fake.enqueue(json.dumps({"verdict": "pass", "reason": "cites real sources"}))
        llm = OpenAILLM(settings("openai", "gpt-4o-mini", OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=KEY))
        assert llm.chat_json("judge this", VERDICT) == {"verdict": "pass", "reason": "cites real sources"}
        body = fake.requests[-1].body
    assert body["temperature"] == 0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": VERDICT, "strict": True},
    }


def test_ollama_sends_the_schema_as_format_at_temperature_0():
    with FakeOllama() as fake:
        fake.enqueue(json.dumps({"verdict": "fail", "reason": "bullet 2 has no citation"}))
        llm = OllamaLLM(settings("ollama", "llama3.1:8b", OLLAMA_HOST=fake.url))
        assert llm.chat_json("judge this", VERDICT)["verdict"] == "fail"
        body = fake.requests[-1].body
    assert body["format"] == VERDICT
    assert body["options"]["temperature"] == 0


def test_gemini_sends_a_json_response_schema_at_temperature_0():
    with FakeGemini() as fake:
        fake.enqueue(json.dumps({"verdict": "pass", "reason": "fine"}))
        llm = GeminiLLM(settings("gemini", "gemini-2.5-flash", GEMINI_BASE_URL=fake.url, GEMINI_API_KEY=KEY))
        assert llm.chat_json("judge this", VERDICT)["reason"] == "fine"
        config = fake.requests[-1].body["generationConfig"]
    assert config["temperature"] == 0
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert set(schema["required"]) == {"verdict", "reason"}


def test_plain_chat_does_not_ask_for_json():
    with FakeOpenAI() as fake:
        fake.enqueue("hello")
        llm = OpenAILLM(settings("openai", "gpt-4o-mini", OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=KEY))
        llm.chat("hi")
        assert "response_format" not in fake.requests[-1].body


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        json.dumps(["pass"]),
        json.dumps({"verdict": "maybe", "reason": "x"}),
        json.dumps({"verdict": "pass"}),
        json.dumps({"verdict": "pass", "reason": "x", "extra": 1}),
    ],
)
def test_an_answer_that_breaks_the_schema_is_an_llm_error_on_every_provider(answer):
    with FakeOllama() as fake:
        fake.enqueue(answer)
        llm = OllamaLLM(settings("ollama", "llama3.1:8b", OLLAMA_HOST=fake.url))
        with pytest.raises(LLMError, match="structured answer"):
            llm.chat_json("judge", VERDICT)
    scripted = ScriptedLLM([answer])
    with pytest.raises(LLMError, match="structured answer"):
        scripted.chat_json("judge", VERDICT)


def test_scripted_keeps_each_schema_and_checks_its_answer():
    llm = ScriptedLLM(['```json\n{"verdict": "pass", "reason": "ok"}\n```'])
    assert llm.chat_json("judge", VERDICT) == {"verdict": "pass", "reason": "ok"}
    assert llm.schemas == [VERDICT]
    assert llm.prompts == ["judge"]


HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None


def test_the_local_model_gets_a_grammar_that_admits_only_the_schema():
    if not HAVE_LLAMA:
        pytest.skip("llama_cpp is not importable")
    grammar = json_grammar(VERDICT)
    text = getattr(grammar, "_grammar", None) or str(grammar)
    assert "pass" in text and "fail" in text


@pytest.mark.slow
def test_the_shipped_local_model_answers_in_the_schema():
    if not HAVE_LLAMA or shipped_model_path() is None:
        pytest.skip("llama_cpp or the shipped model is missing")
    llm = LocalLLM(settings("local", "", timeout=120.0))
    answer = llm.chat_json("Is the sky green? Answer with a verdict and a short reason.", VERDICT)
    assert answer["verdict"] in ("pass", "fail")
