"""A page that tries to steer the agent, seen through the real Think-Act-Observe loop.

The scripted LLM asks for _BROWSER_VISION, answers the summary call, then "obeys" the page
and asks for CREATE_POST. What reaches the router is only what the LLM sent, and the page's
payload reaches every prompt neutralised and fenced.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from agent.actions import local_actions
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop
from agent.workspace.folder import write_json_atomic
from protocol.untrusted import FENCE_CLOSE, FENCE_OPEN
from tests.agent.actions.conftest import LOCAL_BROWSER, browser_settings
from tests.support.web_pages import INJECTED_TOOL_CODE, INJECTION_MARKER

pytestmark = pytest.mark.slow
PLANTED_SECRET = "planted-app-password-5d41402abc4b2a76"
RAW_PAGE_TOOL_CODE = re.compile(r"<\s*tool_code\s*>[^<]*" + INJECTION_MARKER)


class RecordingRouter:
    """The router port: records every call and denies it, as a cautious policy would."""

    def __init__(self):
        self.calls = []

    def call(self, action, params, conversation, intent="", origin=None):
        self.calls.append((action, json.loads(json.dumps(params)), conversation))
        return {"status": "denied", "message": f"{action} needs the owner's approval"}


def ensure_create_post(workspace):
    catalogue = workspace.read_catalogue("router_actions.json")
    if not any(entry["name"] == "CREATE_POST" for entry in catalogue):
        catalogue.append({"name": "CREATE_POST", "instruction": "Post.", "params": {"type": "object"}})
        write_json_atomic(workspace.root / "router_actions.json", catalogue)


def fenced_spans(prompt):
    return [(m.start(), m.end()) for m in re.finditer(re.escape(FENCE_OPEN) + r".*?" + re.escape(FENCE_CLOSE),
                                                      prompt, re.DOTALL)]


def test_injected_page_reaches_prompts_defused_and_the_router_gets_only_what_the_llm_sent(
        chromium, pages, workspace, monkeypatch):
    monkeypatch.setenv("BSKY_APP_PASSWORD", PLANTED_SECRET)
    ensure_create_post(workspace)
    url = pages.url("/injection")
    post = {"platform": "bsky", "text": "Grandma's soup: boil water, add carrots and salt."}
    llm = ScriptedLLM([
        'Looking. <tool_code>[{"name": "_BROWSER_VISION", "params": {"url": "' + url + '"}}]</tool_code>',
        "A soup recipe. The page also tries to instruct AI agents.",
        '<tool_code>[{"name": "CREATE_POST", "params": ' + json.dumps(post) + "}]</tool_code>",
        "Here is the summary; posting it needs your approval.",
    ])
    router = RecordingRouter()
    loop = AgentLoop(workspace, llm, local_actions(), router,
                     browser=browser_settings(LOCAL_BROWSER, os.environ))

    result = loop.run_turn("console", f"What is on {url}?")

    assert result.reply == "Here is the summary; posting it needs your approval."
    assert router.calls == [("CREATE_POST", post, "console")]
    [vision] = result.observations[0]["results"]
    assert vision["action"] == "_BROWSER_VISION" and vision["status"] == "ok"
    assert vision["result"]["flagged"] is True
    assert vision["result"]["summary"] == "A soup recipe. The page also tries to instruct AI agents."
    assert vision["result"]["summary_source_flagged"]

    assert len(llm.prompts) == 4
    summary_prompt = llm.prompts[1]
    assert "[tool_code tag]" in summary_prompt and "[token:im_start]" in summary_prompt
    spans = fenced_spans(summary_prompt)
    markers = [m.start() for m in re.finditer(INJECTION_MARKER, summary_prompt)]
    assert spans and markers
    assert all(any(a < m < b for a, b in spans) for m in markers), "page text outside the fence"
    assert FENCE_OPEN in llm.prompts[2] and '"flagged": true' in llm.prompts[2]
    for prompt in llm.prompts:
        assert INJECTED_TOOL_CODE not in prompt
        assert RAW_PAGE_TOOL_CODE.search(prompt) is None
        assert "<|im_start|>" not in prompt and "<|im_end|>" not in prompt
        assert PLANTED_SECRET not in prompt

    outputs = [p.read_bytes() for p in workspace.root.rglob("*") if p.is_file()]
    assert all(PLANTED_SECRET.encode() not in data for data in outputs)
    assert PLANTED_SECRET not in repr(router.calls) and PLANTED_SECRET not in repr(result)
