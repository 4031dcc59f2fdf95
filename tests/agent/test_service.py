"""AgentService: one turn per message; a turn that fails never ends the agent or its channel."""

import asyncio
import io

from agent.channels.console import ConsoleChannel
from agent.config import load_settings
from agent.llm.scripted.llm import ScriptedLLM
from agent.router_client import NoRouter
from agent.service import AgentService, build_loop


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
