"""Issue 19, item 6: a prompt always fits its model. 20 Mastodon notifications of default size made a
5,137-token prompt, and with no `num_ctx` Ollama kept only its last tokens: the rules at the top fell
out, silently. Each provider states its window (Ollama: `num_ctx` in every request, from the model's
own metadata or the config); each prompt is fitted to it, outside data first, never the rules; the
rules are repeated after the data. Checked on the request each provider's real client sends."""

from __future__ import annotations

import json

import pytest

from agent.actions import local_actions
from agent.config.sections import LLMSettings
from agent.llm import create_llm
from agent.mind.loop import AgentLoop, LoopLimits
from agent.mind.prompt import CHARS_PER_TOKEN
from tests.agent.mind.test_loop import tool
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

WINDOW = 8192
RULES = "If no action is needed, answer in plain text with no <tool_code> block."
REMINDER = "The rules still hold after the data above"


def notification(i: int) -> dict:
    """One notification as the Mastodon skill returns it, at the size a real one reaches."""
    return {"kind": "mention", "author": f"user{i}@example.social", "post_id": str(110_000_000 + i),
            "url": f"https://example.social/@user{i}/{110_000_000 + i}", "created_at": "2026-11-24T08:00:00Z",
            "text": (f"Hey @owner, thread {i}: " + "here is what I think about the release and its notes. " * 12)}


class NotificationsRouter:
    def call(self, action, params, conversation, intent="", origin=None):
        return {"status": "ok", "result": {"notifications": [notification(i) for i in range(20)]}}


PROVIDERS = {
    "ollama": (FakeOllama, lambda f: {"OLLAMA_HOST": f.url}, "llama3.1:8b"),
    "openai": (FakeOpenAI, lambda f: {"OPENAI_BASE_URL": f.base_url, "OPENAI_API_KEY": "sk-" + "t"}, "gpt-4o-mini"),
    "gemini": (FakeGemini, lambda f: {"GEMINI_BASE_URL": f.url, "GEMINI_API_KEY": "g-" + "t"}, "gemini-2.5-flash"),
}


def prompts_sent(name, fake):
    sent = [r for r in fake.requests if r.method == "POST" and not r.path.endswith("/api/show")]
    if name == "gemini":
        return [r.body["contents"][0]["parts"][0]["text"] for r in sent], sent
    return [r.body["messages"][0]["content"] for r in sent], sent


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_a_turn_reading_twenty_notifications_sends_prompts_that_fit_with_the_rules_whole(name, workspace):
    fake_cls, env, model = PROVIDERS[name]
    with fake_cls() as fake:
        fake.enqueue(tool(("GET_NOTIFICATIONS", {"platform": "mastodon"})), "You have 20 mentions about the release.")
        settings = LLMSettings.from_env(env(fake), provider=name, model=model, timeout=10, context_window=WINDOW)
        loop = AgentLoop(workspace, create_llm(settings), local_actions(), NotificationsRouter(), LoopLimits(3, 1))
        assert loop.run_turn("console", "answer my notifications").reply.startswith("You have 20")
        prompts, requests = prompts_sent(name, fake)
    assert len(prompts) == 2
    budget = loop.llm.prompt_budget()
    assert budget is not None and budget < WINDOW
    for prompt in prompts:
        assert len(prompt) <= budget * CHARS_PER_TOKEN, len(prompt)
        assert RULES in prompt and "<how_to_act>" in prompt
        assert prompt.index(REMINDER) > prompt.index("<artifact>")  # the rules again, after the data
    assert "user19@example.social" in prompts[1]  # the newest results are what is kept
    if name == "ollama":
        assert [r.body["options"]["num_ctx"] for r in requests] == [WINDOW, WINDOW]


def test_ollama_sets_num_ctx_from_the_models_own_metadata_capped():
    with FakeOllama() as fake:
        fake.context_length = 2048
        fake.enqueue("one", "two")
        small = create_llm(LLMSettings.from_env({"OLLAMA_HOST": fake.url}, provider="ollama", model="llama3.1:8b"))
        small.chat("hi")
        fake.context_length = 131072
        big = create_llm(LLMSettings.from_env({"OLLAMA_HOST": fake.url}, provider="ollama", model="llama3.1:8b"))
        big.chat("hi")
        chats = [r for r in fake.requests if r.path == "/api/chat"]
    assert [r.body["options"]["num_ctx"] for r in chats] == [2048, 8192]
    assert json.dumps(chats[0].body["messages"]) .count("hi") == 1
