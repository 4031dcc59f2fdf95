"""Run the explainer over the dataset, judge each answer, and gather the metrics.

Offline (the default) each item is loaded into the fake AppView, read through a real router,
and explained by the chosen provider (the scripted provider replays the item's recorded
replies). With `live`, items are read from the real AppView at their recorded live_url."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.errors import ConfigError, LLMError
from agent.explain import ExplainError, explain_post
from agent.llm.base import BaseLLM
from agent.llm.scripted.llm import ScriptedLLM
from agent.llm.usage import estimated_usage
from evals.dataset import EvalItem, load_into, scripted_replies
from evals.judge import PASS_SCORE, judge
from evals.stack import EvalStack

Say = Callable[[str], None]


class CountingLLM(BaseLLM):
    """Wraps the judge's provider to count its calls and tokens apart from the explainer's."""

    def __init__(self, inner: BaseLLM) -> None:
        super().__init__(inner.model, inner.timeout)
        self.inner, self.name = inner, inner.name
        self.calls = self.tokens = 0

    def chat(self, prompt: str) -> str:
        return self.inner.chat(prompt)

    def chat_json(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        answer = self.inner.chat_json(prompt, schema)
        usage = self.inner.last_usage or estimated_usage(prompt, str(answer))
        self.tokens += usage.total
        return answer


def evaluate_item(item: EvalItem, url: str, router: Any, llm: BaseLLM, say: Say) -> dict[str, Any]:
    """One item's outcome: the explainer's answer and metrics, and the judge's score."""
    outcome: dict[str, Any] = {
        "id": item.id,
        "category": item.category,
        "url": url,
        "gold_summary": item.gold_summary,
    }
    started = time.monotonic()
    try:
        result = explain_post(url, router, llm, progress=lambda line: say(f"  {line}"))
    except ExplainError as exc:
        return {
            **outcome,
            "error": exc.kind,
            "message": exc.message,
            "score": 0,
            "passed": False,
            "judge_reason": "no answer to judge",
            "bullets": [],
            "sources": [],
            "seconds": 0.0,
        }
    outcome.update(result.to_json())
    outcome["explainer_passed"] = outcome.pop("passed")
    outcome["seconds"] = round(time.monotonic() - started, 2)
    counting = CountingLLM(llm)
    try:
        verdict = judge(counting, result.post_text, item.gold_summary, result.bullets)
    except LLMError as exc:
        verdict = {"score": 0, "reason": f"the judge failed: {exc}", "passed": False}
    outcome.update(
        score=verdict["score"],
        judge_reason=verdict["reason"],
        passed=verdict["passed"],
        judge_calls=counting.calls,
        judge_tokens=counting.tokens,
    )
    return outcome


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 3) if values else 0.0


def summarise(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [o for o in outcomes if "error" not in o]
    return {
        "posts": len(outcomes),
        "passed": sum(1 for o in outcomes if o["passed"]),
        "pass_rate": round(sum(1 for o in outcomes if o["passed"]) / len(outcomes), 3) if outcomes else 0.0,
        "mean_score": _mean([o["score"] for o in outcomes]),
        "explainer_pass_rate": _mean([1.0 if o.get("explainer_passed") else 0.0 for o in outcomes]),
        "citation_validity_rate": _mean([o["citation_validity"] for o in answered]),
        "bullets_per_answer": _mean([len(o["bullets"]) for o in answered]),
        "iterations_per_post": _mean([o["iterations"] for o in answered]),
        "llm_calls_per_post": _mean([o["llm_calls"] for o in answered]),
        "tokens_per_post": _mean([o["tokens"] for o in answered]),
        "errors": sum(1 for o in outcomes if "error" in o),
    }


def run_offline(
    items: list[EvalItem], make_llm: Callable[[list[str]], BaseLLM], run_dir: Path, say: Say
) -> list[dict[str, Any]]:
    """Every item through the fake AppView; `make_llm(recorded replies)` gives each item's model."""
    try:
        from tests.support.fake_bsky import FakeBluesky  # the offline AppView lives with the test fakes
    except ImportError:
        raise ConfigError(
            "offline evals serve the dataset from tests/support/fake_bsky.py: run them "
            "from a full checkout of the repository, or use --live"
        ) from None

    appview = FakeBluesky()
    appview.start()
    outcomes = []
    try:
        with EvalStack(run_dir, appview.url) as router:
            for item in items:
                appview.clear()
                urls = load_into(appview, item)
                say(f"{item.id} ({item.category})")
                outcomes.append(
                    evaluate_item(
                        item, urls[item.target], router, make_llm(scripted_replies(item, urls)), say
                    )
                )
                say(_verdict_line(outcomes[-1]))
    finally:
        appview.stop()
    return outcomes


def run_live(items: list[EvalItem], llm: BaseLLM, run_dir: Path, say: Say) -> list[dict[str, Any]]:
    """Items with a recorded live_url, read from the real AppView (no credentials)."""
    outcomes = []
    with EvalStack(run_dir, None) as router:
        for item in items:
            if not item.live_url:
                say(f"{item.id}: skipped (no live_url recorded for it)")
                continue
            say(f"{item.id} ({item.category})")
            outcomes.append(evaluate_item(item, item.live_url, router, llm, say))
            say(_verdict_line(outcomes[-1]))
    return outcomes


def _verdict_line(outcome: dict[str, Any]) -> str:
    verdict = "PASS" if outcome["passed"] else "FAIL"
    if "error" in outcome:
        return f"{verdict} {outcome['id']}: {outcome['error']}: {outcome['message']}"
    return (
        f"{verdict} {outcome['id']}: judge {outcome['score']}/10 (pass ≥{PASS_SCORE}), "
        f"{len(outcome['bullets'])} bullets, citations {outcome['citation_validity']:.0%} valid, "
        f"{outcome['iterations']} iterations — {outcome['judge_reason']}"
    )


def scripted_factory(replies: list[str]) -> BaseLLM:
    return ScriptedLLM(replies)
