"""A model reply is capped before anything keeps or sends it, and history keeps a bounded size per
entry: a 10 MB answer is neither kept whole (every later prompt and turn would carry it) nor sent
as thousands of Telegram messages."""

from __future__ import annotations

import asyncio
import json

from agent.app import build_loop
from agent.link.router_client import NoRouter
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService
from agent.workspace.bounds import MAX_HISTORY_ENTRY_CHARS
from tests.agent.channels.telegram_helpers import OWNER, make_settings, running, wait_for
from tests.support.fake_telegram import FakeTelegram

HUGE = "spam " * (2 * 1024 * 1024)  # 10 MB


def test_a_ten_megabyte_reply_is_capped_in_telegram_and_in_history(tmp_path):
    with FakeTelegram() as fake:
        settings = make_settings(fake, tmp_path)
        llm = ScriptedLLM([HUGE, "Small answer."])
        service = AgentService(settings, build_loop(settings, llm=llm, router=NoRouter()))
        channel = service.make_channel("telegram")
        channel.retry_base_delay = 0.01
        fake.push_message(OWNER, OWNER, "say a lot")
        fake.push_message(OWNER, OWNER, "and now?")

        async def scenario():
            async with running(channel, fake):
                await wait_for(fake, lambda: "Small answer." in fake.sent_texts(OWNER), 120)

        asyncio.run(scenario())
    sent = fake.sent_texts(OWNER)
    assert len(sent) <= 20  # 64 KB in Telegram's 4096-character messages, not 2,469 of them
    first_reply = "".join(sent[:-1])
    assert len(first_reply) <= 64 * 1024 + 200
    assert "truncated" in first_reply  # the owner is told the answer was cut
    [first, second] = service.loop.workspace.load_history(f"telegram:{OWNER}")
    assert len(first["response"]) <= MAX_HISTORY_ENTRY_CHARS
    assert second["response"] == "Small answer."
    assert len(llm.prompts[1]) < 200_000  # the next turn's prompt does not carry the 10 MB


def test_a_long_owner_message_is_kept_bounded_in_history(tmp_path):
    settings = make_settings(FakeTelegramStandIn(), tmp_path)
    loop = build_loop(settings, llm=ScriptedLLM(["ok"]), router=NoRouter())
    loop.run_turn("console", "x" * 500_000)
    [turn] = loop.workspace.load_history("console")
    assert len(turn["user"]) <= MAX_HISTORY_ENTRY_CHARS and "truncated" in turn["user"]
    assert len(json.dumps(turn)) <= 2 * MAX_HISTORY_ENTRY_CHARS + 500


class FakeTelegramStandIn:
    """Settings need a Telegram URL and token; this test never starts the channel."""

    url = "http://127.0.0.1:9"
    token = "123:not-used"
