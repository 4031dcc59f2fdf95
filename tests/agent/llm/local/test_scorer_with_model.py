"""llama.cpp as a token model for ranking (slow: it loads SmolLM2 through llama.cpp)."""

import importlib.util
import math

import pytest

from agent.llm.local.llm import LocalLLM
from agent.llm.local.model_file import shipped_model_path
from agent.llm.local.ranking import continuation_logprobs, sequence_logprobs
from agent.llm.local.scorer import LlamaTokenModel

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None or shipped_model_path() is None,
        reason="the embedded model is not installed (make install)",
    ),
]


@pytest.fixture(scope="module")
def llama():
    return LocalLLM()._loaded()


def tokens(llama, text):
    return list(llama.tokenize(text.encode(), add_bos=False, special=True))


def test_each_fed_token_gets_a_distribution_and_rewinding_keeps_what_came_before(llama):
    model = LlamaTokenModel(llama)
    context = tokens(llama, "<|im_start|>user\nPost hello to bluesky<|im_end|>\n<|im_start|>assistant\n")
    llama.reset()
    rows = model.feed(context)
    assert len(rows) == len(context) and model.position() == len(context)
    for row in (rows[-1], model.next_logprobs()):
        assert math.fsum(math.exp(v) for v in row) == pytest.approx(1.0, abs=1e-4)
    answer = tokens(llama, "I will publish a new post.<|im_end|>")
    first = sequence_logprobs(model, answer)
    model.rewind(len(context))
    assert sequence_logprobs(model, answer) == pytest.approx(first)  # the same after a rewind
    model.rewind(len(context))
    ranked = continuation_logprobs(model, {"post": answer, "chat": tokens(llama, "Hello!<|im_end|>")})
    assert ranked["post"] == pytest.approx(first)
    assert model.position() == len(context)
    with pytest.raises(ValueError):
        model.rewind(len(context) + 1)


def test_generation_goes_on_from_what_was_fed(llama):
    model = LlamaTokenModel(llama)
    context = tokens(llama, "<|im_start|>user\nSay yes<|im_end|>\n<|im_start|>assistant\n")
    llama.reset()
    model.feed(context)
    out = llama.create_completion(context + tokens(llama, "Yes"), max_tokens=3, temperature=0.0, top_k=1)
    assert out["usage"]["prompt_tokens"] == len(context) + 1
    assert isinstance(out["choices"][0]["text"], str)
