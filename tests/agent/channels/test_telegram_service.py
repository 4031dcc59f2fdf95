"""The Telegram channel wired to a real AgentService and AgentLoop with the scripted LLM."""

from __future__ import annotations

import asyncio

import pytest

from agent.app import build_loop
from agent.link.router_client import NoRouter
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService
from tests.agent.channels.telegram_helpers import OWNER, STRANGER, make_settings, running, wait_for
from tests.support.fake_telegram import FakeTelegram

OTHER_CHAT = -100777


@pytest.fixture
def fake():
    with FakeTelegram() as server:
        yield server


def make_service(fake, tmp_path, replies, **settings_args):
    settings = make_settings(fake, tmp_path, **settings_args)
    service = AgentService(settings, build_loop(settings, llm=ScriptedLLM(replies), router=NoRouter()))
    channel = service.make_channel("telegram")
    channel.retry_base_delay = 0.01
    return service, channel


def test_each_chat_keeps_its_own_history_and_clear_forgets_only_that_chat(fake, tmp_path):
    service, channel = make_service(fake, tmp_path, ["Hello private.", "Hello group."], allow_groups=True)
    workspace = service.loop.workspace
    fake.push_message(OWNER, OWNER, "hi from private")
    fake.push_message(OWNER, OTHER_CHAT, "hi from the group", chat_type="supergroup")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER) and fake.sent_texts(OTHER_CHAT))
            fake.push_message(OWNER, OWNER, "/clear")
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 2)

    asyncio.run(scenario())
    assert fake.sent_texts(OWNER) == ["Hello private.", "Done: I forgot this chat's history."]
    assert fake.sent_texts(OTHER_CHAT) == ["Hello group."]
    assert workspace.load_history(f"telegram:{OWNER}") == []
    group_turns = workspace.load_history(f"telegram:{OTHER_CHAT}")
    assert [(t["user"], t["response"]) for t in group_turns] == [("hi from the group", "Hello group.")]
    assert workspace.load_history("console") == []


def test_status_names_the_llm_and_the_router_state(fake, tmp_path):
    _, channel = make_service(fake, tmp_path, [])
    fake.push_message(OWNER, OWNER, "/status")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: fake.sent_texts(OWNER))

    asyncio.run(scenario())
    [status] = fake.sent_texts(OWNER)
    assert "scripted" in status
    assert fake.sent_messages(OWNER)[0].get("parse_mode") is None  # REDIS_URL is not Markdown
    assert "Redis" in status and "REDIS_URL" in status  # no router reachable without Redis


def test_commands_are_allowlist_gated(fake, tmp_path):
    service, channel = make_service(fake, tmp_path, ["never used"], allow_groups=True)
    service.loop.workspace.begin_turn(f"telegram:{OWNER}", "keep me")
    for command in ("/clear", "/status", "/help", "/start"):
        fake.push_message(STRANGER, OWNER, command, chat_type="group")  # a stranger in the owner's group
    fake.push_message(OWNER, OWNER, "/help")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 2)

    asyncio.run(scenario())
    refusal, help_text = fake.sent_texts(OWNER)
    assert "only answer its owner" in refusal and "/clear" in help_text
    assert [t["user"] for t in service.loop.workspace.load_history(f"telegram:{OWNER}")] == ["keep me"]


class RecordingRouter:
    def __init__(self):
        self.calls = []

    def call(self, action, params, conversation, intent="", origin=None):
        self.calls.append((action, params, conversation))
        return {"status": "denied", "error": "kill_switch", "message": "the kill switch is on"}


def test_slash_commands_are_registered_and_run_through_the_router_without_the_model(fake, tmp_path):
    settings = make_settings(fake, tmp_path)
    router = RecordingRouter()
    llm = ScriptedLLM([])  # no reply queued: a command that reached the model would fail
    service = AgentService(settings, build_loop(settings, llm=llm, router=router))
    channel = service.make_channel("telegram")
    fake.push_message(OWNER, OWNER, "/post@safeclaw_test_bot bsky Hello_world from *Telegram*")
    fake.push_message(OWNER, OWNER, "/like")

    async def scenario():
        async with running(channel, fake):
            await wait_for(fake, lambda: len(fake.sent_texts(OWNER)) == 2)

    asyncio.run(scenario())
    [registered] = fake.calls_of("setMyCommands")
    names = [c["command"] for c in registered.params["commands"]]
    for name in ("post", "reply", "like", "delete", "notifications", "remember", "forget", "memory",
                 "browse", "status", "clear", "help"):
        assert name in names
    post = next(c for c in registered.params["commands"] if c["command"] == "post")
    assert "<platform> <text>" in post["description"]
    assert router.calls == [("CREATE_POST", {"platform": "bsky", "text": "Hello_world from *Telegram*"},
                             f"telegram:{OWNER}")]
    denied, usage = fake.sent_messages(OWNER)
    assert denied["text"] == "Not done: the router refused to post on Bluesky: the kill switch is on"
    assert denied.get("parse_mode") is None  # a command's answer is plain text
    assert usage["text"].startswith("Usage: /like [platform] <post URL>")
    assert llm.prompts == []
