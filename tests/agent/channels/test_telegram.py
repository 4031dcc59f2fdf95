"""The Telegram channel with the real python-telegram-bot against a fake Bot API server."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest

from agent.channels.telegram import TelegramChannel, chat_id_of
from agent.errors import ConfigError
from tests.agent.channels.telegram_helpers import (
    OWNER,
    Echo,
    make_channel,
    make_settings,
    running,
    wait_for,
)
from tests.support.fake_telegram import FakeTelegram, dropped_connection, server_error, too_many_requests


@pytest.fixture
def fake():
    with FakeTelegram() as server:
        yield server


def test_owner_message_is_answered_in_its_own_conversation_with_typing_shown(fake, tmp_path):
    echo = Echo()
    channel = make_channel(fake, tmp_path, echo)
    fake.push_message(OWNER, OWNER, "hello")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert fake.sent_texts(OWNER) == ["echo: hello"]
    assert [(m.channel, m.conversation, m.user_id, m.text) for m in echo.seen] == [
        ("telegram", f"telegram:{OWNER}", str(OWNER), "hello")
    ]
    actions = fake.calls_of("sendChatAction")
    assert actions and actions[0].params == {"chat_id": OWNER, "action": "typing"}
    assert fake.sent_messages(OWNER)[0].get("parse_mode") is None  # plain text: see below


def test_long_reply_is_split_into_ordered_chunks_within_the_limit(fake, tmp_path):
    paragraphs = [f"Paragraph {n}. " + ("word " * 700).strip() + "." for n in range(4)]
    long_reply = "\n\n".join(paragraphs)
    assert len(long_reply) > 4096 * 2
    channel = make_channel(fake, tmp_path, Echo(lambda _: long_reply))
    fake.push_message(OWNER, OWNER, "tell me everything")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 4)

    asyncio.run(scenario())
    sent = fake.sent_texts(OWNER)
    assert sent == paragraphs  # each paragraph fits, so each is its own message, in order
    assert all(len(chunk) <= 4096 for chunk in sent)


def test_a_reply_quoting_a_markdown_link_is_sent_as_plain_text_without_a_preview(fake, tmp_path):
    """Issue 19, item 8: a notification holding `[Account locked](https://evil…)` became a live link
    in the owner's chat. Every message is plain text: the address shows as written."""
    quoted = "Your notifications: [Account locked](https://evil.example/login) and *urgent* `x`"
    fake.reject_markdown_marker = "*urgent"
    channel = make_channel(fake, tmp_path, Echo(lambda _: quoted))
    fake.push_message(OWNER, OWNER, "read my notifications")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    attempts = fake.calls_of("sendMessage")
    assert [(c.answered, c.params.get("parse_mode")) for c in attempts] == [(200, None)]
    assert attempts[0].params["link_preview_options"] == {"is_disabled": True}
    assert fake.sent_texts(OWNER) == [quoted]


@pytest.mark.parametrize("failure", [too_many_requests(1), dropped_connection(), server_error()],
                         ids=["429", "dropped-connection", "500"])
def test_send_failures_are_retried_and_the_reply_delivered_once(fake, tmp_path, failure):
    fake.fail_next("sendMessage", failure)
    channel = make_channel(fake, tmp_path)
    fake.push_message(OWNER, OWNER, "ping")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    first_status = 0 if failure.drop else failure.status
    assert [c.answered for c in fake.calls_of("sendMessage")] == [first_status, 200]
    assert fake.sent_texts(OWNER) == ["echo: ping"]


def test_send_gives_up_after_bounded_attempts(fake, tmp_path):
    fake.fail_next("sendMessage", *[server_error()] * 10)
    channel = make_channel(fake, tmp_path)

    async def scenario():
        async with running(channel, fake):
            with pytest.raises(Exception, match="Internal Server Error"):
                await channel.send(f"telegram:{OWNER}", "hello")

    asyncio.run(scenario())
    assert len(fake.calls_of("sendMessage")) == channel.send_attempts


@pytest.mark.slow
def test_polling_keeps_going_after_server_errors_and_429(fake, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="safeclaw")
    fake.fail_next("getUpdates", server_error(), too_many_requests(1), dropped_connection())
    channel = make_channel(fake, tmp_path)
    fake.push_message(OWNER, OWNER, "still there?")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert fake.sent_texts(OWNER) == ["echo: still there?"]
    assert any("polling failed" in r.getMessage() for r in caplog.records)


def test_restart_answers_each_pending_update_exactly_once(fake, tmp_path):
    echo = Echo()
    first = fake.push_message(OWNER, OWNER, "sent while the agent was down")

    async def scenario():
        async with running(make_channel(fake, tmp_path, echo), fake):
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 1)
        assert fake.confirmed >= first  # the stop confirmed it
        fake.push_message(OWNER, OWNER, "sent between the runs")
        async with running(make_channel(fake, tmp_path, echo), fake):
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 2)
            # An update queued now is fetched after any redelivered old one, so once it is answered
            # an old one would have been answered again too.
            fake.push_message(OWNER, OWNER, "while running")
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 3)

    asyncio.run(scenario())
    assert fake.sent_texts(OWNER) == [
        "echo: sent while the agent was down", "echo: sent between the runs", "echo: while running",
    ]
    assert len(echo.seen) == 3
    for call in fake.calls_of("deleteWebhook"):
        assert call.params.get("drop_pending_updates") in (None, False, "False", "false")


def test_stop_during_a_turn_answers_it_and_confirms_it(fake, tmp_path):
    """A SIGTERM'd agent (stop() mid-turn) finishes the reply and the update is not fetched again."""
    release = asyncio.Event()

    async def slow(message):
        await release.wait()
        return "finished"

    async def scenario():
        channel = make_channel(fake, tmp_path, slow)
        async with running(channel, fake) as task:
            update_id = fake.push_message(OWNER, OWNER, "think hard")
            await wait_for(fake, lambda: fake.calls_of("sendChatAction"))  # the turn is running
            stopping = asyncio.create_task(channel.stop())
            await asyncio.sleep(0.2)
            assert not stopping.done()  # stop waits for the turn
            release.set()
            await stopping
            assert task.done()
        assert fake.sent_texts(OWNER) == ["finished"]
        assert fake.confirmed >= update_id
        echo = Echo()
        async with running(make_channel(fake, tmp_path, echo), fake):
            fake.push_message(OWNER, OWNER, "next")
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 2)
        assert [m.text for m in echo.seen] == ["next"]

    asyncio.run(scenario())


def test_chats_are_separate_conversations(fake, tmp_path):
    echo = Echo()
    group = -1001234
    fake.push_message(OWNER, OWNER, "in private")
    fake.push_message(OWNER, group, "in the group", chat_type="supergroup")

    async def scenario():
        async with running(make_channel(fake, tmp_path, echo, allow_groups=True), fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER) and fake.sent_texts(group))

    asyncio.run(scenario())
    assert [(m.conversation, m.text) for m in echo.seen] == [
        (f"telegram:{OWNER}", "in private"), (f"telegram:{group}", "in the group"),
    ]
    assert fake.sent_texts(group) == ["echo: in the group"]


def test_missing_or_bad_settings_are_clear_config_errors(fake, tmp_path, monkeypatch):
    settings = dataclasses.replace(make_settings(fake, tmp_path).channels.telegram, bot_token="")
    with pytest.raises(ConfigError, match=r"TELEGRAM_BOT_TOKEN is not set.*agent/\.env"):
        TelegramChannel(Echo(), settings)
    with pytest.raises(ConfigError, match=r"config.json: 'channels.telegram.allowed_user_ids' must be a list"):
        make_channel(fake, tmp_path, allowed=("123",))
    with pytest.raises(ConfigError, match="does not look like a bot token"):
        make_channel(fake, tmp_path, token="not a token")


def test_a_token_telegram_rejects_stops_the_channel_with_a_clear_error(fake, tmp_path):
    channel = make_channel(fake, tmp_path, token="987654321:" + "AAwrongTokenButRightShape_xxxxxxxxxxxx")  # fake; split so scanners skip it
    with pytest.raises(ConfigError, match="rejected TELEGRAM_BOT_TOKEN"):
        asyncio.run(channel.start())
    asyncio.run(channel.stop())  # safe after a failed start, and twice
    asyncio.run(channel.stop())


def test_send_needs_a_running_channel_and_a_telegram_conversation(fake, tmp_path):
    channel = make_channel(fake, tmp_path)
    with pytest.raises(RuntimeError, match="not running"):
        asyncio.run(channel.send("telegram:1", "hi"))
    assert chat_id_of("telegram:-100") == -100
    with pytest.raises(ValueError, match="not a Telegram conversation"):
        chat_id_of("console")


def test_an_unreachable_api_at_start_up_is_retried_until_it_answers(fake, tmp_path):
    fake.fail_next("getMe", dropped_connection(), server_error(), too_many_requests(1))
    channel = make_channel(fake, tmp_path)
    fake.push_message(OWNER, OWNER, "are you up?")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    assert [c.answered for c in fake.calls_of("getMe")] == [0, 500, 429, 200]
    assert fake.sent_texts(OWNER) == ["echo: are you up?"]


def test_stop_while_telegram_is_still_unreachable_returns(fake, tmp_path):
    fake.fail_next("getMe", *[dropped_connection()] * 1000)
    channel = make_channel(fake, tmp_path)

    async def scenario():
        task = asyncio.create_task(channel.start())
        await wait_for(fake, lambda: len(fake.calls_of("getMe")) >= 2)
        await channel.stop()
        await task  # returns, no error, no polling ever started

    asyncio.run(scenario())
    assert fake.calls_of("getUpdates") == []
