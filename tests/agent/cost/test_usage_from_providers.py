"""Each provider's tokens come from its own usage fields, not from a guess."""

import pytest

from agent.config.sections import LLMSettings
from agent.llm.gemini.llm import GeminiLLM
from agent.llm.ollama.llm import OllamaLLM
from agent.llm.openai.llm import OpenAILLM
from agent.llm.scripted.llm import ScriptedLLM
from agent.llm.usage import Usage, usage_or_estimate
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

LONG_PROMPT = "word " * 400  # an estimate from this text would be about 500 tokens, not 10


def llm_settings(provider: str, env: dict[str, str]) -> LLMSettings:
    return LLMSettings.from_env(env, provider=provider, timeout=2.0)


@pytest.mark.parametrize(
    ("fake_cls", "make"),
    [
        (FakeOllama, lambda f: OllamaLLM(llm_settings("ollama", {"OLLAMA_HOST": f.url}))),
        (
            FakeOpenAI,
            lambda f: OpenAILLM(
                llm_settings("openai", {"OPENAI_BASE_URL": f.base_url, "OPENAI_API_KEY": "sk-" + "test"})
            ),
        ),
        (
            FakeGemini,
            lambda f: GeminiLLM(
                llm_settings("gemini", {"GEMINI_BASE_URL": f.url, "GEMINI_API_KEY": "g-" + "test"})
            ),
        ),
    ],
    ids=["ollama", "openai", "gemini"],
)
def test_usage_is_the_one_the_provider_reported(fake_cls, make):
    # The fakes answer usage 10 in, 5 out (Ollama prompt_eval_count/eval_count, OpenAI usage,
    # Gemini usageMetadata), whatever the prompt's length.
    with fake_cls() as fake:
        fake.enqueue("a reply of several words here")
        llm = make(fake)
        llm.chat(LONG_PROMPT)
    assert llm.last_usage == Usage(10, 5)


def test_scripted_usage_is_deterministic_words():
    llm = ScriptedLLM(["one two three"])
    llm.chat("a b c d")
    assert llm.last_usage == Usage(4, 3)
    assert llm.estimate_input_tokens("a b c d") == 4


@pytest.mark.parametrize("bad", [None, -1, "12", True, 1.5])
def test_missing_or_nonsense_counts_fall_back_to_an_estimate_marked_so(bad):
    usage = usage_or_estimate(bad, 5, "x" * 40, "y" * 8)
    assert usage == Usage(10, 2, estimated=True)
