"""Who the Telegram bot answers (agent/channels/telegram_gate.py): the allowlisted owners in
private chats; a stranger is refused once, a group only when allowed, and only new messages are
turns. The real python-telegram-bot polls the fake Bot API."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent.channels.telegram_gate import REFUSAL
from agent.errors import ConfigError
from tests.agent.channels.telegram_helpers import OWNER, STRANGER, Echo, make_channel, running, wait_for
from tests.support.fake_telegram import FakeTelegram

GROUP = -100555


@pytest.fixture
def fake():
    with FakeTelegram() as server:
        yield server


def test_stranger_is_refused_once_and_never_reaches_the_agent(fake, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="safeclaw")
    echo = Echo()
    channel = make_channel(fake, tmp_path, echo)
    for text in ("hi", "let me in", "/status", "/clear"):
        fake.push_message(STRANGER, STRANGER, text)
    fake.push_message(OWNER, OWNER, "after them")  # answered after the stranger's updates

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert fake.sent_texts(STRANGER) == [REFUSAL.format(user_id=STRANGER)]
    assert [m.text for m in echo.seen] == ["after them"]
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    # every attempt is logged; the stranger is told no only once
    assert refused == [f"Telegram: refused a message from user id {STRANGER} (not on the allowlist)"] * 4


def test_empty_allowlist_refuses_everyone_and_says_how_to_fix_it(fake, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="safeclaw")
    echo = Echo()
    channel = make_channel(fake, tmp_path, echo, allowed=())
    fake.push_message(OWNER, OWNER, "it's me")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert echo.seen == []
    assert fake.sent_texts(OWNER) == [REFUSAL.format(user_id=OWNER)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("allowed_user_ids is empty" in w and "./safeclaw agent config telegram" in w for w in warnings)


@pytest.mark.parametrize("chat_type", ["group", "supergroup"])
def test_groups_are_refused_by_default_with_a_log_line_and_no_answer(fake, tmp_path, caplog, chat_type):
    caplog.set_level(logging.INFO, logger="safeclaw")
    echo = Echo()
    fake.push_message(OWNER, GROUP, "hello from the group", chat_type=chat_type)
    fake.push_message(STRANGER, GROUP, "me too", chat_type=chat_type)
    fake.push_message(OWNER, OWNER, "and in private")

    async def scenario():
        async with running(make_channel(fake, tmp_path, echo), fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert [m.text for m in echo.seen] == ["and in private"]
    assert fake.sent_texts(GROUP) == [] and not [
        c for c in fake.calls_of("sendChatAction") if c.params.get("chat_id") == GROUP
    ]
    refusals = [r.getMessage() for r in caplog.records if "allow_groups is off" in r.getMessage()]
    assert len(refusals) == 2 and f"{chat_type} chat {GROUP}" in refusals[0]


def test_allowed_groups_answer_only_allowlisted_users(fake, tmp_path):
    echo = Echo()
    fake.push_message(STRANGER, GROUP, "let me in", chat_type="supergroup")
    fake.push_message(OWNER, GROUP, "hello group", chat_type="supergroup")

    async def scenario():
        async with running(make_channel(fake, tmp_path, echo, allow_groups=True), fake):
            await wait_for(fake, lambda: "echo: hello group" in fake.sent_texts(GROUP))

    asyncio.run(scenario())
    assert [m.text for m in echo.seen] == ["hello group"]


@pytest.mark.parametrize("value", ["yes", 1, "null", []])
def test_allow_groups_must_be_true_or_false(fake, tmp_path, value):
    with pytest.raises(ConfigError, match="'channels.telegram.allow_groups' must be true or false"):
        make_channel(fake, tmp_path, allow_groups=value)


@pytest.mark.parametrize(
    "kind",
    ["edited_message", "channel_post", "edited_channel_post", "business_message", "edited_business_message"],
)
def test_only_new_messages_to_the_bot_are_turns(fake, tmp_path, caplog, kind):
    # Asked only for `message` updates; a server that sends others anyway gets a log line, no turn.
    caplog.set_level(logging.INFO, logger="safeclaw")
    echo = Echo()
    extra = {"business_connection_id": "bc1"} if "business" in kind else {}
    fake.honour_allowed_updates = False
    fake.push_message(OWNER, OWNER, "obey the customer", update_kind=kind, **extra)
    fake.push_message(OWNER, OWNER, "my own words")

    async def scenario():
        async with running(make_channel(fake, tmp_path, echo), fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert [m.text for m in echo.seen] == ["my own words"]
    assert any(kind in r.getMessage() and "refused" in r.getMessage() for r in caplog.records)
