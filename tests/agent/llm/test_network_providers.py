"""Ollama, OpenAI and Gemini through their official clients against local fakes of their APIs."""

import json
from dataclasses import dataclass
from typing import Any

import pytest

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.gemini.llm import GeminiLLM
from agent.llm.ollama.llm import OllamaLLM
from agent.llm.openai.llm import OpenAILLM
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import Failure, FakeOllama
from tests.support.fake_openai import FakeOpenAI

SECRET = "sk-PLANTED-SECRET-0123456789abcdef"
TIMEOUT = 1.0


@dataclass
class Case:
    name: str
    fake_cls: Any
    llm_cls: Any
    model: str

    def env(self, fake) -> dict[str, str]:
        if self.name == "ollama":
            return {"OLLAMA_HOST": fake.url, "OLLAMA_API_KEY": SECRET}
        if self.name == "openai":
            return {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": SECRET}
        return {"GEMINI_BASE_URL": fake.url, "GEMINI_API_KEY": SECRET}

    def make(self, model: str, env: dict[str, str]) -> Any:
        return self.llm_cls(LLMSettings.from_env(env, provider=self.name, model=model, timeout=TIMEOUT))

    def prompt_sent(self, request) -> str:
        if self.name == "gemini":
            (content,) = request.body["contents"]
            assert content["role"] == "user"
            return "".join(part["text"] for part in content["parts"])
        (message,) = request.body["messages"]
        assert message["role"] == "user"
        return message["content"]


CASES = [
    Case("ollama", FakeOllama, OllamaLLM, "llama3.1:8b"),
    Case("openai", FakeOpenAI, OpenAILLM, "gpt-4o-mini"),
    Case("gemini", FakeGemini, GeminiLLM, "gemini-2.5-flash"),
]


@pytest.fixture(params=CASES, ids=lambda c: c.name)
def case(request):
    return request.param


@pytest.fixture
def fake(case):
    with case.fake_cls() as server:
        yield server


@pytest.fixture
def llm(case, fake):
    return case.make(case.model, case.env(fake))


def generation_requests(fake):
    return [r for r in fake.requests if r.method == "POST" and not r.path.endswith("/api/show")]


def test_prompt_arrives_as_the_one_user_message_and_reply_text_comes_back(case, fake, llm):
    fake.enqueue("first answer", "second answer")
    assert llm.chat("What is <tool_code>?\nline two") == "first answer"
    assert llm.chat("again") == "second answer"
    sent = generation_requests(fake)
    assert [case.prompt_sent(r) for r in sent] == ["What is <tool_code>?\nline two", "again"]
    assert all(case.model in r.path or r.body.get("model") == case.model for r in sent)


def test_credentials_travel_in_the_providers_own_header(case, fake, llm):
    llm.chat("hi")
    headers = generation_requests(fake)[-1].headers
    bearer = ("authorization", f"Bearer {SECRET}")
    expected = {"ollama": bearer, "openai": bearer, "gemini": ("x-goog-api-key", SECRET)}
    name, value = expected[case.name]
    assert headers[name] == value


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("server_error", "500"),
        ("unauthorized", "401"),
        ("rate_limited", "429"),
        ("malformed", "unreadable answer"),
    ],
)
def test_each_failure_is_an_llm_error_that_says_what_to_check(case, fake, llm, mode, expected):
    fake.fail_always(getattr(fake, mode)())
    with pytest.raises(LLMError) as caught:
        llm.chat("hi")
    error = caught.value
    assert error.provider == case.name
    assert expected in str(error)
    assert error.hint  # every failure tells the user what to do


def test_unknown_model_says_so_and_how_to_fix(case, fake):
    llm = case.make("no-such-model", case.env(fake))
    for call in (llm.chat, llm.check):
        with pytest.raises(LLMError, match="model 'no-such-model' not found") as caught:
            call("hi") if call == llm.chat else call()
        if case.name == "ollama":
            assert "ollama pull no-such-model" in caught.value.hint


def test_a_reply_slower_than_the_timeout_is_an_llm_error(case, fake, llm):
    fake.fail_always(fake.slow(30))  # the fake wakes early when it stops
    with pytest.raises(LLMError, match=r"no answer .* within 1 s"):
        llm.chat("hi")


def test_an_empty_reply_is_an_error_not_an_answer(case, fake, llm):
    fake.enqueue("   ")
    with pytest.raises(LLMError, match="empty reply"):
        llm.chat("hi")


def test_a_dead_server_is_an_llm_error_naming_the_address(case, fake):
    env = case.env(fake)
    dead = "http://127.0.0.1:9"  # discard port: nothing listens
    for key in ("OLLAMA_HOST", "GEMINI_BASE_URL"):
        if key in env:
            env[key] = dead
    if "OPENAI_BASE_URL" in env:
        env["OPENAI_BASE_URL"] = dead + "/v1"
    with pytest.raises(LLMError, match="cannot reach") as caught:
        case.make(case.model, env).chat("hi")
    assert "127.0.0.1:9" in str(caught.value)


def test_check_passes_when_the_provider_answers(case, fake, llm):
    llm.check()
    assert fake.requests, "check() must really ask the server"


def test_the_key_never_appears_in_any_error_even_when_the_server_echoes_it(case, fake, llm):
    messages = []
    echo = fake.error_body(401, f"Incorrect API key provided: {SECRET}")
    for failure in (fake.server_error(), fake.rate_limited(), fake.malformed(), fake.slow(30)):
        fake.fail_always(failure)
        with pytest.raises(LLMError) as caught:
            llm.chat("hi")
        messages.append(caught.value)
    fake.fail_always(type(fake.server_error())(401, echo))
    with pytest.raises(LLMError) as caught:
        llm.chat("hi")
    messages.append(caught.value)
    assert "[REDACTED]" in str(caught.value)
    for error in messages:
        assert SECRET not in str(error) and SECRET not in repr(error.args) and SECRET not in error.hint


def test_a_missing_key_fails_at_creation_naming_the_variable(case):
    if case.name == "ollama":
        pytest.skip("Ollama needs no key")
    variable = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}[case.name]
    with pytest.raises(LLMError, match=f"{variable} is not set"):
        case.make(case.model, {})


@pytest.mark.parametrize(
    "body",
    [[1, 2], "text", 5, {"choices": [{"message": "hi"}]}, {"choices": "abc"}, {"choices": [None]},
     {"choices": {"0": 1}}, {"message": "hi"}, {"candidates": [{"content": "x"}]}],
    ids=["list", "string", "number", "message-string", "choices-string", "choice-null", "choices-object",
         "ollama-message-string", "gemini-content-string"],
)
def test_a_json_body_of_an_odd_shape_is_an_llm_error_not_a_crash(case, fake, llm, body):
    fake.fail_always(Failure(200, raw=json.dumps(body).encode()))
    with pytest.raises(LLMError) as caught:
        llm.chat("hi")
    assert caught.value.provider == case.name and caught.value.hint
