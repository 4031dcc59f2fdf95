"""/explain and `explain <url>` on Telegram and in the console: progress while it works, then the
answer; reads through the real router stack; someone else's text is never a command."""

import asyncio
import io
import sys

from agent.app import build_loop
from agent.channels.base import IncomingMessage
from agent.config.settings import load_settings
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService
from tests.agent.channels.telegram_helpers import OWNER, make_settings, running, wait_for
from tests.agent.explain.test_explain_post import BULLETS, seed, step, verdict
from tests.support.fake_telegram import FakeTelegram

SCRIPT = [step("search", "enshittification"), step("finish", bullets=BULLETS), verdict("pass", "good")]


def test_telegram_shows_progress_then_the_explanation(router, bsky, tmp_path):
    url, _ = seed(bsky)
    with FakeTelegram() as fake:
        settings = make_settings(fake, tmp_path)
        llm = ScriptedLLM([*SCRIPT, *SCRIPT])
        service = AgentService(settings, build_loop(settings, llm=llm, router=router))
        channel = service.make_channel("telegram")
        service.channels = [channel]
        fake.push_message(OWNER, OWNER, f"/explain {url}")

        async def scenario():
            async with running(channel, fake):
                await wait_for(fake, lambda: any("Sources:" in t for t in fake.sent_texts(OWNER)))
                fake.push_message(OWNER, OWNER, f"explain {url}")  # no slash: the same command
                await wait_for(fake, lambda: sum("Sources:" in t for t in fake.sent_texts(OWNER)) == 2)

        asyncio.run(scenario())
        texts = fake.sent_texts(OWNER)
    first = texts[: texts.index(next(t for t in texts if "Sources:" in t)) + 1]
    assert first[:4] == [
        f"… reading the post: {url}",
        "… searching Bluesky: enshittification",
        "… checking the answer: it holds",
        "… second reading: pass (good)",
    ]
    assert not any("round 1" in t for t in texts)
    answer = first[-1]
    assert (
        f"• {BULLETS[0]}" in answer
        and "[3] [outside: (at)dictwatch[.]test]: https://bsky.app/profile/dictwatch.test/" in answer
    )
    assert len(texts) == 2 * len(first)
    assert service.loop.workspace.load_history(f"telegram:{OWNER}") == []  # a command, not a model turn


def test_the_console_prints_progress_to_stderr_and_the_answer_to_stdout(
    router, bsky, tmp_path, monkeypatch, capsys
):
    url, _ = seed(bsky)
    settings = load_settings()
    service = AgentService(settings, build_loop(settings, llm=ScriptedLLM(SCRIPT), router=router))
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"/explain {url}\n"))
    assert asyncio.run(service._run_channels(["console"])) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Background for @user.test's post ({url}):") and "Sources:" in out
    assert "… round 1 of 10" in err and "… searching Bluesky: enshittification" in err and "round 1" not in out


def test_usage_and_bad_addresses_answer_plainly_without_the_model(router, bsky, tmp_path):
    settings = load_settings()
    llm = ScriptedLLM([])
    service = AgentService(settings, build_loop(settings, llm=llm, router=router))

    def ask(text, outside=None):
        return asyncio.run(
            service.handle(IncomingMessage("console", "console", "owner", text, outside_author=outside))
        )

    assert ask("/explain").startswith("Usage: /explain <post URL>")
    assert ask("/explain https://example.com/x").startswith(
        "I could not explain that post: 'https://example.com/x'"
    )
    assert "no Bluesky account @ghost.test" in ask(
        "/explain https://bsky.app/profile/ghost.test/post/3l22222222222"
    )
    assert llm.prompts == []


def test_someone_elses_explain_is_never_a_command(router, bsky, tmp_path):
    url, _ = seed(bsky)
    settings = load_settings()
    llm = ScriptedLLM(["Just text."])
    service = AgentService(settings, build_loop(settings, llm=llm, router=router))
    bsky.requests.clear()
    message = IncomingMessage(
        "bluesky", "bsky:x", "x", f"/explain {url}", outside_author="@x.test on Bluesky"
    )
    assert asyncio.run(service.handle(message)) == "Just text."
    assert not any(r.path.endswith("getPostThread") for r in bsky.requests)
