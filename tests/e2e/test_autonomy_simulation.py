"""Autonomy's proof: cycles ten minutes apart on an injected clock (08:00 on day 1 to the
morning of day 5) against a real redis-server, a real router with its default hard bounds, and
the Moltbook fake. The feed always has new posts and the LLM always wants to post, except in a
quiet stretch. Along the way: its texts repeat for a while, Moltbook's writes fail for a while,
the owner turns the kill switch on and off, and the budget is lowered until it is spent.

What it shows: no quota is ever exceeded (nor Moltbook's pacing); duplicates are refused; LLM
calls stop exactly at the budget; the circuit opens and closes; the kill switch stops every
public action within one cycle; a quiet feed costs zero LLM calls; once the day's quotas are used
up it makes no LLM call until the next UTC day.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

import pytest

from agent.cost.prices import Price
from tests.support.autonomy_stack import AutonomyStack, autonomy_stack

INTERVAL = 600
DAY_CYCLES = 144  # cycle i runs at 08:00 + i * 10 min on day 1: day 2 begins at i = 96
DAY2, DAY3, DAY4, DAY5 = (96 + DAY_CYCLES * n for n in range(4))
CYCLES = DAY5 + 16
REPEATING = range(3, 7)  # the LLM repeats the same post and comment
QUIET = range(DAY2, DAY2 + 20)  # no new posts
FAILING = range(DAY3 + 4, DAY3 + 12)  # Moltbook answers 500 to every write
KILL_ON, KILL_OFF = DAY4 + 6, DAY4 + 16
BUDGET_AT = DAY5 + 2  # the owner lowers the total budget to what is spent plus about four busy cycles
RESTING = {"quota_exceeded", "paced", "circuit_open"}
PRICE = Price(1.0, 1.0, "owner")  # USD per million tokens for the eager poster
QUOTA = {"CREATE_POST": 5, "MOLTBOOK_COMMENT": 20}  # the router's defaults: posts, replies per day


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Any:
    tmp = tmp_path_factory.mktemp("autonomy-simulation")
    budget = {"daily_usd": 1000, "total_usd": 1000, "prices": {"eager-poster": {"input": 1.0, "output": 1.0}}}
    with autonomy_stack(
        tmp, budget=budget, autonomy={"cycle_interval": INTERVAL, "max_cycles": 1000}
    ) as stack:
        yield simulate(stack)


class Record(dict[str, Any]):
    """One cycle as seen from outside: its report, the LLM calls it made, what reached Moltbook."""


def simulate(stack: AutonomyStack) -> dict[str, Any]:
    admin = stack.redis.admin_client()
    records: list[Record] = []
    started = time.monotonic()
    for i in range(CYCLES):
        if i not in QUIET:
            stack.add_posts(2)
        stack.llm.repeat_text = i in REPEATING
        stack.moltbook.fail_writes = i in FAILING
        if i == KILL_ON:
            admin.set(
                stack.redis.keys.kill_switch, json.dumps({"on": True, "by": "owner", "ts": stack.clock()})
            )
        if i == KILL_OFF:
            admin.set(
                stack.redis.keys.kill_switch, json.dumps({"on": False, "by": "owner", "ts": stack.clock()})
            )
        if i == BUDGET_AT:
            guard = stack.cycle.guard
            spent = guard.status().total_usd
            guard.settings = replace(guard.settings, total_usd=round(spent + 0.02, 6))
        calls, content = stack.metered.calls, len(stack.agent_posts()) + len(stack.agent_comments())
        report = stack.cycle.run_once()
        records.append(
            Record(
                i=i,
                at=stack.clock(),
                report=report,
                calls=stack.metered.calls - calls,
                reached=len(stack.agent_posts()) + len(stack.agent_comments()) - content,
                health=json.loads(admin.get(stack.redis.keys.agent_autonomy) or "{}"),
            )
        )
        stack.clock.advance(INTERVAL)
    notices = [json.loads(raw) for raw in admin.lrange(stack.redis.keys.owner_notices, 0, -1)]
    admin.close()
    ledger = [json.loads(line) for line in (stack.workspace / "logs" / "cost.jsonl").read_text().splitlines()]
    return {
        "records": records,
        "stack": stack,
        "notices": notices,
        "ledger": ledger,
        "seconds": time.monotonic() - started,
        "budget": stack.cycle.guard.settings.total_usd,
    }


def sent(record: Record) -> list[dict[str, Any]]:
    return [p for p in record["report"].public if p["status"] == "ok"]


@pytest.mark.slow  # its fixture runs four days of cycles (12-17 s)
def test_it_ran_every_cycle_acting_whenever_the_bounds_let_it(run):
    records = run["records"]
    assert len(records) == CYCLES and records[-1]["report"].cycle == CYCLES
    outcomes = Counter(r["report"].outcome for r in records)
    assert outcomes["acted"] > 90 and outcomes["paused:quota_exceeded"] > 200, outcomes
    assert run["seconds"] < 240  # no sleeps: days of cycles on an injected clock


def test_no_quota_is_ever_exceeded_nor_moltbooks_pacing(run):
    per_day: dict[tuple[str, str], int] = defaultdict(int)
    last_post = None
    for record in run["records"]:
        day = time.strftime("%Y-%m-%d", time.gmtime(record["at"] - 0))
        for event in sent(record):
            per_day[(day, event["action"])] += 1
            if event["action"] == "CREATE_POST":
                assert last_post is None or record["at"] - last_post >= 1800, "two posts within 30 min"
                last_post = record["at"]
    assert per_day, "nothing was ever sent"
    for (day, action), count in per_day.items():
        assert count <= QUOTA[action], (day, action, count)
    # The defaults were reached, and refused past them:
    assert max(per_day[(d, "CREATE_POST")] for d, _ in per_day) == QUOTA["CREATE_POST"]
    errors = Counter(
        p.get("error") for r in run["records"] for p in r["report"].public if p["status"] != "ok"
    )
    assert errors["quota_exceeded"] > 0 and errors["paced"] > 0, errors
    stack = run["stack"]
    days = len({day for day, _ in per_day})
    assert len(stack.agent_posts()) <= days * QUOTA["CREATE_POST"]
    assert len(stack.agent_comments()) <= days * QUOTA["MOLTBOOK_COMMENT"]


def test_duplicates_are_refused(run):
    refused = [
        p
        for r in run["records"]
        if r["i"] in REPEATING
        for p in r["report"].public
        if p.get("error") == "duplicate_content"
    ]
    assert refused, "a repeated text was not refused"
    stack = run["stack"]
    texts = [p.content for p in stack.agent_posts()] + [c["content"] for c in stack.agent_comments()]
    assert len(texts) == len(set(texts))


def test_llm_calls_stop_exactly_at_the_budget(run):
    budget, ledger = run["budget"], run["ledger"]
    spent = 0.0
    for call in ledger:  # every call was made with the budget not spent, its prompt fitting in it
        prompt_cost = PRICE.usd(call["input_tokens"], 0)
        assert spent + prompt_cost <= budget + 1e-9, (spent, prompt_cost, budget)
        spent += call["usd"]
    records = run["records"]
    last_call = max(r["i"] for r in records if r["calls"])
    after = records[last_call + 1 :]
    assert after and all(r["calls"] == 0 for r in after)
    assert all(r["report"].outcome == "paused:budget" for r in after[1:])
    # ...and it stopped because the next call would not fit: not one call too early.
    next_prompt = min(c["input_tokens"] for c in ledger if c["label"] == "autonomy")
    assert spent + PRICE.usd(next_prompt, 0) > budget or spent >= budget
    assert any(kind == "pause" and "budget is spent" in text for kind, text in run["stack"].notices)


def test_the_circuit_opens_and_closes_and_the_owner_is_told(run):
    records = run["records"]
    failing_end = FAILING[-1]
    open_at = [r["i"] for r in records for p in r["report"].public if p.get("error") == "circuit_open"]
    assert open_at and FAILING[0] < open_at[0] <= failing_end, open_at
    paused = [r["i"] for r in records if r["report"].outcome == "paused:circuit_open"]
    assert paused, "the agent did not pause on the open circuit"
    assert any(sent(r) for r in records if failing_end < r["i"] < KILL_ON), "writes did not resume"
    kinds = [n.get("kind") or n.get("type") for n in reversed(run["notices"])]
    assert "circuit_open" in kinds and "circuit_closed" in kinds[kinds.index("circuit_open") :], kinds
    assert any(kind == "pause" and "circuit_open" in text for kind, text in run["stack"].notices)


def test_the_kill_switch_stops_every_public_action_within_one_cycle(run):
    during = [r for r in run["records"] if KILL_ON <= r["i"] < KILL_OFF]
    assert all(r["reached"] == 0 and not sent(r) for r in during)
    refused = [p for r in during for p in r["report"].public]
    assert refused and all(p["error"] == "kill_switch" for p in refused)
    assert during[1]["report"].outcome == "paused:kill_switch"  # and it stops trying: no LLM calls
    assert sum(r["calls"] for r in during[1:]) < sum(r["calls"] for r in during[:1]) * len(during)
    # Switched off, the router answers on the merits again (here the day's quotas are used up).
    after = [p for r in run["records"] if KILL_OFF <= r["i"] < BUDGET_AT for p in r["report"].public]
    assert after and after[-1]["error"] != "kill_switch"


def test_a_quiet_feed_costs_zero_llm_calls(run):
    quiet = [r for r in run["records"] if r["i"] in QUIET and r["i"] != QUIET[0]]
    assert quiet and all(r["report"].outcome == "rested" and r["calls"] == 0 for r in quiet)


def day_of(record: Record) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(record["at"]))


def test_used_up_quotas_cost_zero_llm_calls_until_the_next_utc_day(run):
    records = run["records"]
    rests = [
        i
        for i, r in enumerate(records)
        if r["report"].outcome == "paused:quota_exceeded"
        and records[i - 1]["report"].outcome != "paused:quota_exceeded"
    ]
    assert len(rests) >= 3, "the day's quotas were never used up"  # days 1, 2 and 3 at least
    for start in rests:
        refused = records[start - 1]["report"].public
        assert refused and all(p["error"] in RESTING for p in refused), refused
        assert any(p["error"] == "quota_exceeded" for p in refused)
        rest = []
        for r in records[start:]:
            if day_of(r) != day_of(records[start]):
                break
            rest.append(r)
        assert all(r["calls"] == 0 and r["report"].outcome == "paused:quota_exceeded" for r in rest)
        assert all(r["health"].get("paused") == "quota_exceeded" for r in rest)  # the heartbeat shows it
        following = records[start + len(rest) :]
        if following:  # the next UTC day: it reads and calls the LLM again at its first cycle
            assert following[0]["report"].outcome == "acted" and following[0]["calls"] > 0
            assert day_of(following[0]) != day_of(records[start])
    told = [
        t
        for kind, t in run["stack"].notices
        if kind == "pause" and "every public write" in t and "quota_exceeded" in t
    ]
    assert len(told) == len(rests)  # the owner is told once per rest
    assert all("no LLM call until" in t and "00:00:00Z" in t for t in told), told
