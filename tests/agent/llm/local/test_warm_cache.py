"""The embedded model's warm-up kept on disk (issue 21, item 10): the next start evaluates neither the
fixed prompt nor the calibration again, ranks exactly as a cold start does, and a damaged cache
is computed again, never trusted."""

from __future__ import annotations

import pytest

from agent.actions import local_actions
from agent.config.sections import LLMSettings
from agent.llm.local import choose, decide
from agent.llm.local.llama_models import CONTEXT_TOKENS
from agent.llm.local.llm import LocalLLM
from agent.llm.local.warm_cache import WARM_CACHE
from agent.mind.loop import AgentLoop
from tests.agent.llm.local.test_local_turns_with_model import Recorder, needs_model

MESSAGE = "Show my bluesky notifications"


@pytest.fixture
def new_start(monkeypatch, tmp_path):
    """Each call: what a new process has (no state in memory), with the cache in tmp_path."""
    monkeypatch.setattr(WARM_CACHE, "folder", tmp_path / "cache")
    calls = {"prefix": 0, "baseline_runs": 0}
    real_evaluate, real_logprobs = decide.evaluate, choose.continuation_logprobs

    def counting_evaluate(llama, tokens):
        calls["prefix"] += 1
        return real_evaluate(llama, tokens)

    def counting_logprobs(model, candidates):
        calls["baseline_runs"] += 1
        return real_logprobs(model, candidates)

    monkeypatch.setattr(decide, "evaluate", counting_evaluate)
    monkeypatch.setattr(choose, "continuation_logprobs", counting_logprobs)

    def start(workspace):
        monkeypatch.setattr(decide, "PREFIXES", decide.PrefixState())
        monkeypatch.setattr(decide, "BASELINES", choose.Baselines())
        calls.update(prefix=0, baseline_runs=0)
        llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
        llm.use_rules = False  # the model ranks: the calibration is used
        loop = AgentLoop(workspace, llm, local_actions(), Recorder())
        loop.warm_up()
        return loop, llm

    return start, calls, tmp_path / "cache"


@pytest.mark.slow
@needs_model
def test_the_next_start_reads_the_warm_up_and_ranks_exactly_as_a_cold_one(workspace, new_start):
    start, calls, cache = new_start
    loop, llm = start(workspace)
    assert calls["prefix"] == 1 and calls["baseline_runs"] == 3  # cold: one run per content-free message
    assert sorted(p.suffix for p in cache.iterdir()) == [".json", ".json", ".state"]
    loop.run_turn("console", MESSAGE)
    cold = [(r.name, r.score) for r in llm.last_decision.ranking]

    loop, llm = start(workspace)
    assert calls == {"prefix": 0, "baseline_runs": 0}  # nothing evaluated again
    loop.run_turn("console", MESSAGE)
    assert [(r.name, r.score) for r in llm.last_decision.ranking] == cold
    assert llm.context_window() == CONTEXT_TOKENS == 2048


@pytest.mark.slow
@needs_model
def test_a_damaged_cache_is_computed_again_and_replaced(workspace, new_start):
    start, calls, cache = new_start
    loop, llm = start(workspace)
    loop.run_turn("console", MESSAGE)
    cold = [(r.name, r.score) for r in llm.last_decision.ranking]
    [state] = cache.glob("*.state")
    whole = state.read_bytes()
    state.write_bytes(whole[: len(whole) // 2])  # a write cut short
    [baselines] = cache.glob("*.baselines.json")
    baselines.write_text("{not json", encoding="utf-8")

    loop, llm = start(workspace)
    assert calls["prefix"] == 1 and calls["baseline_runs"] == 3
    assert state.read_bytes() == whole
    loop.run_turn("console", MESSAGE)
    assert [(r.name, r.score) for r in llm.last_decision.ranking] == cold


@pytest.mark.slow
@needs_model
def test_a_message_longer_than_a_batch_is_evaluated_in_batches(workspace):
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
    loop = AgentLoop(workspace, llm, local_actions(), Recorder())
    long_message = "Show my bluesky notifications " + "and tell me more about them " * 110
    reply = loop.run_turn("console", long_message).reply
    assert llm.last_usage.input_tokens > llm._loaded().n_batch, llm.last_usage
    assert "notifications" in reply.lower()
