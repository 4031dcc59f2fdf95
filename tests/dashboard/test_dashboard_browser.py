"""The dashboard in a real headless Chromium: the real dashboard process, a real router (in a
thread) on a real redis-server, and the Mastodon fake as the platform. A person's clicks:
Approve makes the fake receive exactly one post; the kill switch makes the next CREATE_POST
come back denied. Screenshots go to tests/artifacts/dashboard/ (git-ignored)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

from protocol.keys import Keys
from router.registry import discover_skills
from tests.dashboard.conftest import pill_text, shot, until
from tests.dashboard.helpers import TOKEN
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for, wait_until
from tests.support.fake_mastodon import FakeMastodon

pytestmark = pytest.mark.slow
REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "tests" / "artifacts" / "dashboard"
MASTO_TOKEN = "masto-" + "dashboard-token-7781"
KEYS = Keys()
POST_TEXT = "Hello from the approval test"


@pytest.fixture
def masto():
    server = FakeMastodon(token=MASTO_TOKEN).start()
    yield server
    server.stop()


def test_owner_sees_live_status_approves_once_and_stops_posting(
    redis_urls, masto, dashboard, browser, tmp_path
):
    admin = redis_urls.admin_client()
    admin.set(
        KEYS.agent_heartbeat,
        json.dumps(
            {"ts": time.time(), "llm_provider": "scripted", "llm": {"ok": True}, "channels": ["console"]}
        ),
        ex=60,
    )
    credentials = {"MASTODON_INSTANCE": masto.url, "MASTODON_TOKEN": MASTO_TOKEN}
    settings = settings_for(
        redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="mastodon:post", **credentials
    )
    with WorkerThread(settings, discover_skills(), credentials):
        browser.get(dashboard + f"#token={TOKEN}")
        until(
            browser,
            'document.querySelector(\'[data-part="router:r1"][data-state="ok"]\')',
            "the router's green light",
        )
        until(browser, 'document.querySelector(\'[data-part="redis"][data-state="ok"]\')', "Redis OK")
        assert TOKEN not in browser.current_url  # the token left the address bar
        shot(browser, "1-live-status")

        held = reply_of(
            admin,
            KEYS,
            push(
                admin,
                KEYS,
                "CREATE_POST",
                {"platform": "mastodon", "text": POST_TEXT},
                conversation="telegram:7",
            ),
        )
        assert held["status"] == "pending_approval" and masto.posts() == []
        approval = f'.approval[data-id="{held["approval_id"]}"]'
        until(browser, f"document.querySelector('{approval}')", "the approval to appear live")
        card = browser.find_element("css selector", approval)
        assert POST_TEXT in card.text and "on Mastodon" in card.text
        shot(browser, "2-pending-approval")
        card.find_element("css selector", "button.approve").click()

        wait_until(lambda: masto.posts(), "the fake to receive the post")
        until(browser, f"!document.querySelector('{approval}')", "the approval to leave the list")
        until(browser, "document.querySelector('#activity li[data-status=\"done\"]')", "the post in the feed")
        time.sleep(1.0)  # long enough for a second run to show up, if there were one
        assert len(masto.posts()) == 1 and masto.posts()[0].form().get("status") == POST_TEXT
        shot(browser, "3-approved-once")

        browser.find_element("id", "kill-toggle").click()
        until(browser, "!document.getElementById('kill-confirm').hidden", "the confirmation")
        shot(browser, "4-kill-confirmation")
        browser.find_element("id", "kill-yes").click()
        until(browser, "document.getElementById('kill-state').dataset.on === 'true'", "the switch on")
        assert browser.execute_script("return document.getElementById('band').dataset.level") == "red"
        denied = reply_of(
            admin, KEYS, push(admin, KEYS, "CREATE_POST", {"platform": "mastodon", "text": "no"})
        )
        assert denied["status"] == "denied" and denied["error"] == "kill_switch"
        until(
            browser,
            "document.querySelector('#activity li[data-status=\"refused\"]')",
            "the denial in the feed",
        )
        shot(browser, "5-kill-switch-on")
    assert len(masto.posts()) == 1


def test_a_stuck_autonomy_shows_red_in_the_status_bar(redis_urls, dashboard, browser):
    admin = redis_urls.admin_client()
    now = time.time()
    beat = {
        "timestamp": now - 400,
        "current_action": "idle",
        "action_started_at": now - 400,
        "cycle_count": 7,
        "last_cycle_at": now - 400,
        "cycle_interval": 60,
        "pid": 1,
        "paused": "",
    }
    admin.set(KEYS.agent_autonomy, json.dumps(beat))
    browser.get(dashboard + f"#token={TOKEN}")
    pill = '[data-part="autonomy"]'
    until(browser, f"document.querySelector('{pill}[data-state=\"bad\"]')", "the red autonomy light")
    assert "Autonomy is stuck: no heartbeat for" in pill_text(browser, pill)
    shot(browser, "6-autonomy-stuck")
    admin.set(
        KEYS.agent_autonomy, json.dumps({**beat, "timestamp": time.time(), "current_action": "reading"})
    )
    until(browser, f"document.querySelector('{pill}[data-state=\"ok\"]')", "green once it beats again")
    assert "cycle 7, reading" in pill_text(browser, pill)


def test_the_owner_accepts_a_proposal_and_the_agent_writes_it_into_dos(
    redis_urls, dashboard, browser, tmp_path
):
    from agent.governance.files import Governance
    from agent.governance.injections import apply_injections

    governance = Governance(tmp_path / "workspace")  # the dashboard reads this folder, never writes it
    governance.propose("Never post about politics", "the owner asked", "autonomy")
    governance.propose("Reply within a day", "", "autonomy")
    browser.get(dashboard + f"#token={TOKEN}")
    first = '#proposals li[data-number="1"]'
    until(browser, f"document.querySelector('{first} button.accept')", "the proposal with its Accept button")
    shot(browser, "7-proposal-to-accept")
    browser.find_element("css selector", f"{first} button.accept").click()
    until(browser, f"document.querySelector('{first} [data-state=\"requested\"]')", "the accept requested")
    assert "Never post about politics" not in governance.read("DOS.md")  # the dashboard wrote nothing

    agent = redis.Redis.from_url(redis_urls.agent_url, decode_responses=True)
    assert apply_injections(agent, KEYS, governance) == 1  # what each autonomy cycle does first
    agent.close()
    assert "- Never post about politics (proposal #1, accepted" in governance.read("DOS.md")
    assert "Reply within a day" not in governance.read("DOS.md")
    assert 'accepted proposal #1 "Never post about politics"' in governance.read("external_overrides.md")

    browser.refresh()
    until(browser, f"document.querySelector('{first} [data-state=\"accepted\"]')", "the proposal accepted")
    dos = browser.execute_script(
        "return [...document.querySelectorAll('#governance details')]"
        ".find((d) => d.querySelector('summary').textContent === 'DOS.md').querySelector('pre').textContent"
    )
    assert "Never post about politics (proposal #1" in dos
    assert browser.find_elements("css selector", '#proposals li[data-number="2"] button.accept')
    browser.execute_script(
        "[...document.querySelectorAll('#governance details')].forEach((d) => { d.open = d.textContent.startsWith('DOS.md'); })"
    )
    shot(browser, "8-proposal-accepted-in-dos")
