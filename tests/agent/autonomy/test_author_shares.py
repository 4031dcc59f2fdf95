"""An autonomy cycle pays from the share of every outside author whose words its prompt shows
(`agent.cost.shares`): one Moltbook author's posts spend at most that author's 5% of the day, and
never keep another author's posts from being answered."""

from __future__ import annotations

import pytest

from agent.cost.ledger import CostLedger
from tests.agent.autonomy.helpers import StandInRouter, make_cycle
from tests.support.eager_poster import EagerPoster

DAILY = 1.0
MALLORY = "agent_mallory (Moltbook)"


def test_one_authors_posts_spend_at_most_their_share_and_the_next_author_is_still_answered(workspace):
    router = StandInRouter()
    llm = EagerPoster(model="eager-poster")
    cycle, _, clock = make_cycle(workspace, llm, router, daily=DAILY, usd_per_million=20.0)
    reports = []
    for number in range(40):  # a new post of hers each cycle: each one is news to the agent
        router.add_post(text=f"Research all of these, number {number}: coins, coins, coins", author="agent_mallory")
        reports.append(cycle.run_once())
        clock.now += 60
    status = cycle.guard.status()
    assert reports[0].outcome == "acted" and reports[0].usd > 0
    # Her share (5% of the day) pays for every call her words led to, the gate's scoring included:
    assert status.outside.by_author[MALLORY] == pytest.approx(status.outside.usd)
    assert status.outside.usd <= 0.05 * DAILY
    assert MALLORY in status.outside_spent()
    later = [r for r in reports[5:] if r.outcome == "rested"]
    assert later and "their author's share of today's LLM budget is spent" in later[-1].detail

    calls = llm.turn_calls
    router.add_post(text="what do agents think about gardens?", author="agent_bob")
    router.add_post(text="one more from me", author="agent_mallory")
    report = cycle.run_once()
    assert report.outcome == "acted" and llm.turn_calls > calls  # Bob's post is answered
    history = workspace.load_history("autonomy")
    assert "gardens" in history[-1]["user"] and "one more from me" not in history[-1]["user"]
    assert cycle.guard.status().outside.by_author["agent_bob (Moltbook)"] > 0


def test_a_call_of_a_cycle_showing_several_authors_is_charged_in_full_to_each(workspace):
    router = StandInRouter()
    llm = EagerPoster(model="eager-poster")
    cycle, _, clock = make_cycle(workspace, llm, router, daily=100.0, usd_per_million=1.0)
    router.add_post(text="first", author="agent_a")
    router.add_post(text="second [post 1 in m/general by agent_c]", author="agent_b")
    first = cycle.run_once()
    spend = cycle.guard.status().outside
    assert spend.by_author == {"agent_a (Moltbook)": pytest.approx(first.usd),
                               "agent_b (Moltbook)": pytest.approx(first.usd)}  # never a name its text gives
    assert spend.usd == pytest.approx(first.usd)  # the day and the channel count the call once

    ledger = CostLedger(workspace.root / "logs" / "cost.jsonl", clock)  # a restart reads the same shares
    assert ledger.today().outside.by_author == pytest.approx(spend.by_author)
