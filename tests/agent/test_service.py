"""AgentService: one turn per message; a turn that fails never ends the agent or its channel."""

import asyncio
import io

from agent.app import build_loop
from agent.channels.console import ConsoleChannel
from agent.config.settings import load_settings
from agent.link.router_client import NoRouter
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService


def test_a_bug_in_one_turn_is_answered_and_the_console_reads_on(workspace):
    settings = load_settings()
    llm = ScriptedLLM([RuntimeError("a provider bug"), "Second answer."])
    service = AgentService(settings, build_loop(settings, llm=llm, router=NoRouter()))
    stdin = io.TextIOWrapper(io.BytesIO(b"first\nsecond\n"), encoding="utf-8")
    stdout = io.StringIO()

    async def main():
        await asyncio.wait_for(ConsoleChannel(service.handle, stdin, stdout).start(), 30)

    asyncio.run(main())
    replies = stdout.getvalue().splitlines()
    assert len(replies) == 2
    assert "failed" in replies[0] and "a provider bug" not in replies[0]
    assert replies[1] == "Second answer."
    assert [t["user"] for t in workspace.load_history("console")] == ["first", "second"]


def test_a_crash_before_the_message_is_recorded_does_not_claim_it_is_saved(workspace, monkeypatch):
    from agent.channels.base import IncomingMessage

    settings = load_settings()
    service = AgentService(settings, build_loop(settings, llm=ScriptedLLM([]), router=NoRouter()))

    def broken(conversation):
        raise RuntimeError("a bug before the history is written")

    monkeypatch.setattr(service.loop, "snapshot", broken)
    reply = asyncio.run(service.handle(IncomingMessage("console", "console", "owner", "hello")))
    assert "Your message was NOT saved" in reply and "is saved" not in reply


def test_a_notice_for_a_channel_still_starting_is_sent_once_it_runs(workspace, monkeypatch):
    from agent.owner import conversation_notices as owner_notices

    monkeypatch.setattr(owner_notices, "NOTICE_RETRY_SECONDS", 0.01)
    settings = load_settings()
    service = AgentService(settings, build_loop(settings, llm=ScriptedLLM([]), router=NoRouter()))

    class Starting:
        name = "telegram"
        sent: list[tuple[str, str]] = []
        ready_after = 3

        async def send(self, conversation, text):
            self.ready_after -= 1
            if self.ready_after > 0:
                raise RuntimeError("the application is not running yet")
            self.sent.append((conversation, text))

    channel = Starting()
    service.channels = [channel]

    async def scenario():
        await service.tell_owner("telegram:5", "The post you asked for before the restart: sent.")
        for _ in range(200):
            if channel.sent:
                return
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert channel.sent == [("telegram:5", "The post you asked for before the restart: sent.")]
    [turn] = workspace.load_history("telegram:5")
    assert turn["notice"] is True and turn["response"].startswith("The post you asked for")
