"""Issue 19, item 4: with logs/ on a full disk and a $5 budget, 11 calls were billed (≈ $17) while
the guard saw $0: the call was sent, then writing its cost failed. Now a cost the disk refuses is
counted in memory, no further call is sent until it is written, and a ledger that cannot be
written stops the agent at start. On a real small disk (tmpfs; skipped where none can be mounted)."""

from __future__ import annotations

import json

import pytest

from agent.app import build_guard
from agent.config.settings import load_settings
from agent.cost.budget import BudgetGuard, BudgetSettings
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.errors import ConfigError, CostsUnrecorded
from agent.llm.scripted.llm import ScriptedLLM
from tests.support.small_disk import small_disk


@pytest.fixture
def disk(tmp_path):
    with small_disk(tmp_path / "disk") as mounted:
        if isinstance(mounted, str):
            pytest.skip(mounted)
        yield mounted


def metered(ledger_path, replies):
    llm = ScriptedLLM(replies)
    guard = BudgetGuard(BudgetSettings(daily_usd=5, total_usd=5), CostLedger(ledger_path), ledger_path.parent / "a.json")
    return MeteredLLM(llm, guard), llm, guard


def test_a_cost_the_full_disk_refuses_is_counted_and_stops_the_next_call_until_written(disk):
    ledger_path = disk.root / "logs" / "cost.jsonl"
    ledger_path.parent.mkdir(parents=True)
    llm, scripted, guard = metered(ledger_path, ["one", "two"])
    disk.fill()
    assert llm.chat("first") == "one"  # sent before the disk was known full: counted in memory
    assert guard.status().calls_today == 1 and guard.status().tokens_today > 0
    with pytest.raises(CostsUnrecorded) as refused:
        llm.chat("second")
    assert "could not be written" in str(refused.value) and "made no LLM call" in refused.value.reply
    assert len(scripted.prompts) == 1  # nothing was sent while a cost is unwritten
    disk.free()
    assert llm.chat("second") == "two"
    lines = [json.loads(line) for line in ledger_path.read_text().splitlines()]
    assert len(lines) == 2 and guard.status().calls_today == 2


def test_an_agent_whose_ledger_cannot_be_written_refuses_to_start(disk, tmp_path):
    workspace = disk.root / "workspace"
    (workspace / "logs").mkdir(parents=True)
    disk.fill()
    settings = load_settings({"SAFECLAW_WORKSPACE": str(workspace), "SAFECLAW_CONFIG": str(tmp_path / "c.json"),
                              "SAFECLAW_LOG_DIR": str(tmp_path / "logs")})
    with pytest.raises(ConfigError, match="cost.jsonl cannot be written"):
        build_guard(settings)
