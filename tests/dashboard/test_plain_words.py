"""The dashboard in an owner's words, in a real headless Chromium against the real dashboard, a real
router (in a thread) and redis-server: what the router can do, not its skill names; a ping is a
ping, not "Read the router"; an ordinary approval is no problem to fix; the kill switch's question
and the rule form in plain words; no money budget for the free embedded model. A screenshot goes
to tests/artifacts/dashboard/ (git-ignored)."""

from __future__ import annotations

import json
import time

import pytest

from protocol.keys import Keys
from router.registry import discover_skills
from tests.dashboard.conftest import shot, until
from tests.dashboard.helpers import TOKEN
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

pytestmark = pytest.mark.slow
KEYS = Keys()
OLD_WORDS = ("AUTH_TEST", "PING", "skill(s)", "Read the router", "Inject", "routers act under their policy",
             "side effect", "How to fix: see Approvals below", "$2.00")


def page_text(driver) -> str:
    return str(driver.execute_script("return document.body.innerText"))


def test_the_page_speaks_plainly_with_the_embedded_model_and_a_held_post(redis_urls, dashboard, browser,
                                                                          tmp_path):
    admin = redis_urls.admin_client()
    beat = {"ts": time.time(), "llm_provider": "local", "llm_model": "smollm2-135m-instruct", "llm": {"ok": True}}
    admin.set(KEYS.agent_heartbeat, json.dumps(beat))
    admin.set(KEYS.agent_cost, json.dumps({"today_usd": 0.0, "total_usd": 0.0, "daily_budget_usd": 2.0,
                                           "total_budget_usd": 20.0, "calls_today": 3, "tokens_today": 120}))
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="mastodon:post")
    with WorkerThread(settings, discover_skills(), {}):
        assert reply_of(admin, KEYS, push(admin, KEYS, "PING", {}))["status"] == "ok"
        held = reply_of(admin, KEYS, push(admin, KEYS, "CREATE_POST", {"platform": "mastodon", "text": "Hi"}))
        assert held["status"] == "pending_approval"
        browser.get(dashboard + f"#token={TOKEN}")
        until(browser, "document.querySelector('[data-part^=\"router:\"]')", "the router's line")
        until(browser, "document.querySelector('#activity li')", "the activity")
        until(browser, "document.querySelector('[data-part=\"approvals\"]')", "the approvals line")
        until(browser, "document.getElementById('cost').textContent.includes('free')", "the cost")
        browser.find_element("id", "kill-toggle").click()
        until(browser, "!document.getElementById('kill-confirm').hidden", "the confirmation")
        shot(browser, "plain-words")
        shown = page_text(browser)

    for old in OLD_WORDS:
        assert old not in shown, old
    assert "it can post and reply, like posts" in shown and "answer that it is there" in shown
    assert "Checked that the router answers" in shown
    assert "1 action(s) wait for your approval: decide on each under Approvals below" in shown
    assert "Nothing will be posted, replied to, liked or deleted until you resume" in shown
    assert "Give the agent a rule" in shown and "Add the rule" in shown
    assert "Posting is allowed: the routers post, reply, like and delete within your rules" in shown
    assert "is free: no money is spent. 3 call(s) and 120 token(s) today." in shown
    assert "free, no money is spent" in shown  # the LLM line too
