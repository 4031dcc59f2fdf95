"""At 80% the owner is told; at 100% no LLM call is made at all; chat says how to raise it."""

import pytest

from agent.cost.budget import BudgetGuard, BudgetSettings
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.cost.prices import parse_overrides
from agent.errors import BudgetExhausted, ConfigError, LLMError
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop
from tests.agent.cost.test_ledger import DAY, T0


class Clock:
    def __init__(self) -> None:
        self.now = T0 + 60

    def __call__(self) -> float:
        return self.now


def guarded(tmp_path, replies, daily=1.0, total=100.0, per_word_usd=0.1):
    """A scripted model priced so that each word (one token) costs `per_word_usd`."""
    clock, notices, published = Clock(), [], []
    price = per_word_usd * 1_000_000
    settings = BudgetSettings(
        daily, total, parse_overrides({"scripted": {"input": price, "output": price}}, "t")
    )
    guard = BudgetGuard(
        settings,
        CostLedger(tmp_path / "cost.jsonl", clock),
        tmp_path / "alerts.json",
        lambda kind, text: notices.append((kind, text)),
        published.append,
        clock,
    )
    inner = ScriptedLLM(replies)
    return MeteredLLM(inner, guard), inner, clock, notices, published


def test_calls_stop_exactly_when_the_budget_is_spent(tmp_path):
    # Each call costs 0.2 (one word in, one out); the daily budget is 1.0: five calls, then none.
    llm, inner, _, _, _ = guarded(tmp_path, ["ok"] * 20)
    answered = 0
    for _ in range(20):
        try:
            llm.chat("hi")
            answered += 1
        except BudgetExhausted:
            pass
    assert answered == 5 and len(inner.prompts) == 5
    assert llm.guard.status().today_usd == pytest.approx(1.0)


def test_a_prompt_that_alone_would_pass_the_budget_is_never_sent(tmp_path):
    llm, inner, _, _, _ = guarded(tmp_path, ["ok"])
    with pytest.raises(BudgetExhausted):
        llm.chat("word " * 11)  # 11 words x 0.1 > 1.0
    assert inner.prompts == []


def test_the_owner_is_alerted_once_at_80_percent_and_once_when_spent(tmp_path):
    llm, _, _, notices, _ = guarded(tmp_path, ["ok"] * 10)
    for _ in range(4):
        llm.chat("hi")  # 0.8 spent after the 4th call
    assert [text for _, text in notices] == [
        "LLM budget: 80% of the daily budget is spent ($0.8000 of $1.00)."
    ]
    llm.chat("hi")
    for _ in range(3):
        with pytest.raises(BudgetExhausted):
            llm.chat("hi")
    assert len(notices) == 2 and "daily budget is spent" in notices[1][1]


def test_the_daily_budget_starts_again_the_next_utc_day_the_total_does_not(tmp_path):
    llm, inner, clock, _, _ = guarded(tmp_path, ["ok"] * 50, daily=1.0, total=1.6)
    for _ in range(5):
        llm.chat("hi")
    with pytest.raises(BudgetExhausted, match="daily"):
        llm.chat("hi")
    clock.now += DAY
    for _ in range(3):
        llm.chat("hi")
    with pytest.raises(BudgetExhausted, match="total") as spent:
        llm.chat("hi")
    assert "budget.total_usd" in spent.value.reply
    assert len(inner.prompts) == 8


def test_a_failed_call_still_counts_its_prompt(tmp_path):
    llm, _, _, _, _ = guarded(tmp_path, [LLMError("scripted", "timeout")])
    with pytest.raises(LLMError):
        llm.chat("four words right here")
    assert llm.guard.status().calls_today == 1 and llm.guard.status().today_usd > 0


def test_every_call_publishes_the_dashboard_summary(tmp_path):
    llm, _, _, _, published = guarded(tmp_path, ["ok"])
    llm.chat("hi")
    assert published[-1].summary() == {
        "today_usd": 0.2,
        "total_usd": 0.2,
        "daily_budget_usd": 1.0,
        "total_budget_usd": 100.0,
        "calls_today": 1,
        "tokens_today": 2,
        "outside_today_usd": 0.0,
        "outside_budget_usd": 0.25,
        "outside_spent": [],
    }


def test_chat_answers_that_the_budget_is_spent_and_how_to_raise_it(tmp_path, workspace):
    llm, inner, _, _, _ = guarded(tmp_path, ["never sent"], daily=0.0)
    loop = AgentLoop(workspace, llm, {}, router=None)  # type: ignore[arg-type]
    reply = loop.run_turn("console", "hello").reply
    assert "budget is spent" in reply and "budget.daily_usd" in reply and "agent/config.json" in reply
    assert inner.prompts == []
    assert workspace.load_history("console")[-1]["user"] == "hello"  # the message is kept


@pytest.mark.parametrize(
    "bad", [[], {"daily_usd": -1}, {"total_usd": "5"}, {"daily": 1}, {"daily_usd": True}]
)
def test_a_bad_budget_section_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="budget"):
        BudgetSettings.from_config(bad, "config.json")


def test_status_shows_the_spent_budget_and_how_to_raise_it(workspace, tmp_path, monkeypatch):
    import json as _json

    from agent.config.settings import load_settings
    from agent.cost.ledger import CostEntry
    from agent.status.host import check_budget

    (tmp_path / "config.json").write_text(_json.dumps({"budget": {"daily_usd": 0.5, "total_usd": 10}}))
    settings = load_settings()
    CostLedger(settings.workspace.root / "logs" / "cost.jsonl").record(
        CostEntry(__import__("time").time(), "openai", "gpt-4o-mini", 1000, 10, 0.6, "default")
    )
    check = check_budget(settings, "openai")
    assert not check.ok
    assert "$0.6000 of $0.50" in check.text and "SPENT (today)" in check.text
    assert "budget.daily_usd" in check.text


def test_structured_calls_are_checked_and_counted_like_any_other(tmp_path):
    schema = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
    llm, inner, _, _, _ = guarded(tmp_path, ['{"v":"a"}'] * 20)
    answered = 0
    for _ in range(20):
        try:
            assert llm.chat_json("hi", schema) == {"v": "a"}
            answered += 1
        except BudgetExhausted:
            pass
    assert 0 < answered < 20 and len(inner.prompts) == answered == llm.calls
    assert inner.schemas == [schema] * answered
    assert llm.guard.status().today_usd <= 1.0
