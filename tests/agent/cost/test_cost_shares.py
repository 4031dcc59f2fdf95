"""Whose words spend the budget: 14 strangers' mentions, each driving step after step of 8 Bluesky
searches through a real router and Redis, against a $2.00 day. One stranger stops at 5% of the
day, all of them together at 25%, and the owner's next message still runs. The model is the
scripted provider (one token per word, priced per token), so the ledger's figures are its own."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from agent.actions import local_actions
from agent.channels.base import IncomingMessage
from agent.channels.bluesky import mention_message
from agent.channels.jetstream import Post
from agent.config.settings import load_settings
from agent.cost.budget import BudgetGuard, BudgetSettings
from agent.cost.ledger import CostLedger
from agent.cost.metered import MeteredLLM
from agent.cost.prices import parse_overrides
from agent.cost.shares import ShareSettings
from agent.errors import ConfigError
from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from agent.llm.scripted.llm import ScriptedLLM
from agent.llm.turn import current_turn
from agent.mind.loop import AgentLoop, LoopLimits
from agent.service import AgentService
from router.registry import discover_skills
from tests.router.router_helpers import WorkerThread, settings_for
from tests.support.fake_bsky import FakeBluesky

DAILY = 2.0
USD_PER_MILLION = 15.0  # a loop prompt of ~2,000 words costs about $0.03
STRANGERS = [f"did:plc:stranger{n:02d}" for n in range(14)]
OWNER_DID = "did:plc:owner"
OWNER_REPLY = "Your next meeting is at 3pm."


class SearchingLLM(ScriptedLLM):
    """The scripted provider, answering as the turn asks: a stranger's mention gets 8 new
    searches at every step (what a mention that says "research all of this" makes an obedient
    model do), the owner a plain answer. Usage is reported per word, as the scripted provider does."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0
        self.sent_for: list[str | None] = []

    def _next(self, prompt: str) -> str:
        request = current_turn()
        author = request.outside_author if request else None
        self.sent_for.append(author)
        if author is None:
            self.enqueue(OWNER_REPLY)
        else:
            actions = []
            for _ in range(8):
                self.searches += 1
                actions.append({"name": "SEARCH_POSTS", "params": {"query": f"topic{self.searches}"}})
            self.enqueue("Looking into it. <tool_code>" + json.dumps(actions) + "</tool_code>")
        return super()._next(prompt)


@pytest.fixture
def stack(redis_urls, tmp_path, workspace):
    bsky = FakeBluesky().start()
    settings = settings_for(redis_urls.router_url, tmp_path, BSKY_SERVICE=bsky.url, BSKY_APPVIEW=bsky.url)
    price = parse_overrides({"scripted": {"input": USD_PER_MILLION, "output": USD_PER_MILLION}}, "test")
    guard = BudgetGuard(BudgetSettings(DAILY, 50.0, price), CostLedger(tmp_path / "cost.jsonl"),
                        tmp_path / "alerts.json")
    with WorkerThread(settings, discover_skills(), {}):
        client = RouterClient(redis_client(redis_urls.agent_url), redis_urls.keys, timeout=30)
        llm = SearchingLLM()
        loop = AgentLoop(workspace, MeteredLLM(llm, guard), local_actions(), client, LoopLimits(8, 1))
        yield AgentService(load_settings(), loop), llm, guard
        client.close()
    bsky.stop()


def mention(service: AgentService, author: str, n: int) -> str:
    """A mention as the Bluesky channel hands it to the service (agent.channels.bluesky)."""
    post = Post(author, f"3l2mention{n:04d}", "research every topic you can find and report back",
                frozenset({OWNER_DID}), None)
    return asyncio.run(service.handle(mention_message("bluesky", post)))


def test_strangers_share_a_quarter_of_the_day_one_a_twentieth_and_the_owner_goes_on(stack, caplog):
    service, llm, guard = stack
    caplog.set_level(logging.WARNING, "safeclaw.agent.cost")
    replies = [mention(service, author, n) for n, author in enumerate(STRANGERS)]
    day = guard.ledger.today()
    per_author = day.outside.by_author
    most = max(per_author.values())
    author_limit, outside_limit = 0.05 * DAILY, 0.25 * DAILY
    # A call is sent only when its prompt fits the share; its reply (a few words) may pass it.
    overshoot = 200 * USD_PER_MILLION / 1e6
    assert all(usd <= author_limit + overshoot for usd in per_author.values()), per_author
    assert most >= author_limit - 0.04  # less than one call left: stopped by its own share
    assert outside_limit - 0.04 <= day.outside.usd <= outside_limit + overshoot
    assert llm.searches >= 5 * 8
    first = replies[0]
    assert f"the share of today's LLM budget for {STRANGERS[0]} is spent" in first
    assert "My owner's own messages go on" in first
    assert any("for all words from outside is spent" in r for r in replies[5:])
    later = [a for a in STRANGERS if a not in per_author]
    assert later, "once outside words have spent their share, later strangers get no call at all"
    assert any("words from outside is spent" in r.getMessage() for r in caplog.records)

    sent_before = len(llm.prompts)
    owner = asyncio.run(service.handle(IncomingMessage("telegram", "telegram:1", "1", "when is my meeting?")))
    assert owner == OWNER_REPLY and len(llm.prompts) == sent_before + 1
    status = guard.status()
    assert status.today_usd < DAILY and status.exhausted() is None
    line = status.line()
    assert "outside words $" in line and "share spent, refused until tomorrow: all words from outside" in line
    assert STRANGERS[0] in status.summary()["outside_spent"]


def test_an_outside_share_is_kept_in_the_ledger_and_read_back(tmp_path, stack):
    service, _llm, guard = stack
    mention(service, STRANGERS[0], 0)
    again = CostLedger(guard.ledger.path).today()  # another process reading the same file
    assert again.outside.by_author == pytest.approx(guard.ledger.today().outside.by_author)
    assert set(again.outside.by_channel) == {"mention"}


@pytest.mark.parametrize("value", [-0.1, 1.5, "a quarter", True])
def test_a_share_setting_out_of_range_names_its_key(value):
    with pytest.raises(ConfigError, match="budget.author_share"):
        BudgetSettings.from_config({"author_share": value}, "agent/config.json")


def test_share_settings_default_to_a_quarter_and_a_twentieth():
    shares = BudgetSettings.from_config({"daily_usd": 2}, "c").shares
    assert shares == ShareSettings(0.25, 0.05, None)
    assert BudgetSettings.from_config({"outside_share": 0.1, "channel_share": 0.05}, "c").shares == (
        ShareSettings(0.1, 0.05, 0.05))
