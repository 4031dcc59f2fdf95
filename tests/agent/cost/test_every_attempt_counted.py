"""Cost counted before it is spent, on every path: each request a provider receives is one the
budget checked and the ledger counts. A client library's own hidden retry (after a timeout the
server may have billed, or a 5xx) would send a second request the budget never saw."""

from __future__ import annotations

import contextlib
import json

import pytest

from agent.cost.budget import BudgetGuard, BudgetSettings
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.errors import LLMError
from tests.agent.cost.test_usage_from_providers import llm_settings
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

PROVIDERS = {
    "ollama": (FakeOllama, "ollama", lambda f: {"OLLAMA_HOST": f.url}),
    "openai": (
        FakeOpenAI,
        "openai",
        lambda f: {"OPENAI_BASE_URL": f.base_url, "OPENAI_API_KEY": "sk-" + "test"},
    ),
    "gemini": (FakeGemini, "gemini", lambda f: {"GEMINI_BASE_URL": f.url, "GEMINI_API_KEY": "g-" + "test"}),
}


def _metered(provider: str, fake, tmp_path) -> tuple[MeteredLLM, CostLedger]:
    from dataclasses import replace

    from agent.llm import create_llm

    _, name, env = PROVIDERS[provider]
    settings = replace(llm_settings(name, env(fake)), timeout=1.0)
    ledger = CostLedger(tmp_path / "cost.jsonl")
    guard = BudgetGuard(BudgetSettings(), ledger, tmp_path / "alerts.json")
    return MeteredLLM(create_llm(settings), guard), ledger


def _generation_requests(fake) -> int:
    return sum(1 for r in fake.requests if r.method == "POST" and not r.path.endswith("/api/show"))


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("failure", ["slow", "server_error", "rate_limited"])
def test_each_request_sent_is_counted_even_when_a_client_would_retry(provider, failure, tmp_path):
    fake_cls = PROVIDERS[provider][0]
    with fake_cls() as fake:
        first = fake.slow(5) if failure == "slow" else getattr(fake, failure)()
        fake.enqueue(first, "the answer after a retry")
        llm, _ledger = _metered(provider, fake, tmp_path)
        with contextlib.suppress(LLMError):  # a failed call is an error; it must still be counted
            llm.chat("hello")
        sent = _generation_requests(fake)
    counted = [json.loads(line) for line in (tmp_path / "cost.jsonl").read_text().splitlines()]
    assert sent == len(counted) == llm.calls, (sent, counted)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_an_empty_reply_is_counted_at_the_tokens_the_provider_billed(provider, tmp_path):
    """Issue 19, item 5: an empty reply with 30,000 billed output tokens was recorded as the
    prompt alone (≈ $0.02 of $1.52): "empty reply" was raised before the usage was read."""
    fake_cls = PROVIDERS[provider][0]
    with fake_cls() as fake:
        fake.output_tokens = 30_000
        fake.enqueue("")
        llm, _ledger = _metered(provider, fake, tmp_path)
        with pytest.raises(LLMError, match="empty reply"):
            llm.chat("hello")
    (counted,) = [json.loads(line) for line in (tmp_path / "cost.jsonl").read_text().splitlines()]
    assert counted["output_tokens"] == 30_000 and not counted["estimated"]
