"""What an owner does with the dashboard, in a real headless Chromium against the real dashboard
process, a real router (in a thread) and redis-server: open it with the token, read the band
(amber in dry run, red with the kill switch and back), approve from the keyboard, filter and
search the activity and page back through all of it, read the charts' values from their labels.
axe-core checks the page in each state (no serious or critical finding). Screenshots at desktop
and phone widths go to tests/artifacts/dashboard/ (git-ignored)."""

from __future__ import annotations

import json
import time

import pytest
import redis
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys as Key
from selenium.webdriver.support.ui import Select

from protocol.keys import Keys
from router.registry import discover_skills
from tests.dashboard.axe import serious_findings
from tests.dashboard.conftest import shot, until
from tests.dashboard.helpers import TOKEN
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for, wait_until

pytestmark = pytest.mark.slow
KEYS = Keys()
DESKTOP, PHONE = (1280, 1400), (390, 1600)


def both_widths(driver, name: str) -> None:
    """A screenshot at desktop and at phone width; the page must not scroll sideways on a phone."""
    shot(driver, f"{name}-desktop")
    driver.set_window_size(*PHONE)
    time.sleep(0.3)
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    shot(driver, f"{name}-phone")
    driver.set_window_size(*DESKTOP)
    assert overflow <= 1, f"{name}: the phone layout scrolls sideways by {overflow}px"


def no_serious_findings(driver) -> None:
    found = serious_findings(driver)
    assert not found, "\n".join(found)


def band(driver) -> str:
    return str(driver.execute_script("return document.getElementById('band').dataset.level"))


def text_of(driver, selector: str) -> str:
    return str(driver.execute_script("return document.querySelector(arguments[0]).textContent", selector))


def test_dry_run_band_keyboard_approval_and_the_kill_switch(redis_urls, dashboard, browser, tmp_path):
    admin = redis_urls.admin_client()
    settings = settings_for(
        redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="true", ROUTER_REQUIRE_APPROVAL="mastodon:post"
    )
    browser.set_window_size(*DESKTOP)
    with WorkerThread(settings, discover_skills(), {}):
        browser.get(dashboard + f"#token={TOKEN}")
        until(browser, "document.getElementById('band').dataset.level === 'amber'", "the amber dry-run band")
        assert (
            text_of(browser, "#band-headline") == "Dry run: nothing is sent; posts go to router/outbox.jsonl"
        )
        both_widths(browser, "cockpit-1-dry-run")
        no_serious_findings(browser)

        held = reply_of(
            admin,
            KEYS,
            push(
                admin,
                KEYS,
                "CREATE_POST",
                {"platform": "mastodon", "text": "A held hello", "url": "https://example.org/read-more"},
                conversation="telegram:7",
            ),
        )
        assert held["status"] == "pending_approval"
        card = f'.approval[data-id="{held["approval_id"]}"]'
        until(browser, f"document.querySelector('{card}')", "the approval card")
        shown = text_of(browser, card)
        assert "A held hello" in shown and "on Mastodon" in shown and "expires" in shown
        assert "link" + "https://example.org/read-more" in text_of(browser, f"{card} .payload")  # every field
        both_widths(browser, "cockpit-2-approval")
        no_serious_findings(browser)

        # The keyboard only: Tab until the card's Approve button has the focus, then Enter.
        browser.find_element("tag name", "body").click()
        approve = browser.find_element("css selector", f"{card} button.approve")
        for _ in range(80):
            ActionChains(browser).send_keys(Key.TAB).perform()
            if browser.switch_to.active_element == approve:
                break
        assert browser.switch_to.active_element == approve, "Approve is not reachable with Tab"
        ActionChains(browser).send_keys(Key.ENTER).perform()
        until(
            browser,
            "document.querySelector('#activity li[data-status=\"done\"] .tag.dry')",
            "the dry-run line",
        )
        line = text_of(browser, '#activity li[data-status="done"]')
        assert "Would post on Mastodon (dry run: nothing was sent)" in line and "A held hello" in line
        outbox = (tmp_path / "outbox.jsonl").read_text()
        assert "A held hello" in outbox
        until(browser, f"!document.querySelector('{card}')", "the approval to leave the list")

        browser.find_element("id", "kill-toggle").click()
        until(browser, "!document.getElementById('kill-confirm').hidden", "the confirmation")
        browser.find_element("id", "kill-yes").click()
        until(browser, "document.getElementById('band').dataset.level === 'red'", "the red band")
        assert text_of(browser, "#band-headline") == "Posting is stopped"
        assert browser.title == "Posting is stopped · SafeClaw"  # a background tab says it too
        assert "Turned on by you, from the dashboard at" in text_of(browser, "#kill-state")
        assert text_of(browser, "#kill-toggle") == "Resume posting"
        denied = reply_of(
            admin, KEYS, push(admin, KEYS, "CREATE_POST", {"platform": "mastodon", "text": "no"})
        )
        assert denied["status"] == "denied"
        until(browser, "document.querySelector('#activity li[data-status=\"refused\"]')", "the refusal")
        assert "refused: the kill switch was on" in text_of(browser, '#activity li[data-status="refused"]')
        both_widths(browser, "cockpit-3-kill-switch-on")
        no_serious_findings(browser)

        browser.find_element("id", "kill-toggle").click()
        browser.find_element("id", "kill-yes").click()
        until(browser, "document.getElementById('band').dataset.level === 'amber'", "amber again once lifted")
        assert json.loads(admin.get(KEYS.kill_switch))["on"] is False


def _seed_history(admin, workspace, now: float) -> dict[str, int]:
    """Audit lines over the last 6 days, a cost ledger over 30, a router heartbeat with quotas."""
    counts = {"bsky": 0, "mastodon": 0}
    origins = ["console", "telegram", "autonomy", "explain"]
    for i in range(150):
        platform = "bsky" if i % 3 else "mastodon"
        status = "ok" if i % 5 else "denied"
        origin = origins[i % 4]
        line = {
            "ts": now - 6 * 86400 + i * 3000,
            "router": "r1",
            "action": "CREATE_POST",
            "status": status,
            "decision": "allowed" if status == "ok" else "denied: quota_exceeded",
            "text": f"note number {i}" + (" about tea" if i % 10 == 0 else ""),
            "origin": "autonomy"
            if origin == "autonomy"
            else {"channel": origin, "conversation": f"{origin}:1"},
            "effect": {"platform": platform, "kind": "post", "target": None},
            "url": f"https://{platform}.example/post/{i}" if status == "ok" else None,
        }
        if status == "ok":
            counts[platform] += 1
        admin.xadd(KEYS.audit_stream, {"line": json.dumps(line)})
    logs = workspace / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "cost.jsonl").open("w") as ledger:
        for day in range(30):
            ledger.write(json.dumps({"ts": now - day * 86400, "usd": 0.25 if day == 1 else 0.05}) + "\n")
    admin.set(
        KEYS.agent_cost,
        json.dumps({"today_usd": 0.05, "daily_budget_usd": 1.0, "total_usd": 2.0, "total_budget_usd": 50}),
    )
    quotas = {"bsky": {"post": {"limit": 10, "used": 2}}, "mastodon": {"post": {"limit": 15, "used": 15}}}
    beat = {
        "router_id": "r1",
        "ts": now,
        "ttl": 600,
        "skills": ["PING"],
        "quotas": quotas,
        "platforms_with_credentials": ["bsky", "mastodon"],
        "dry_run": False,
    }
    admin.set(KEYS.router_heartbeat("r1"), json.dumps(beat))
    return counts


def test_filter_search_page_back_and_read_the_charts(redis_urls, dashboard, browser, tmp_path):
    admin = redis_urls.admin_client()
    now = time.time()
    counts = _seed_history(admin, tmp_path / "workspace", now)
    browser.set_window_size(*DESKTOP)
    browser.get(dashboard + f"#token={TOKEN}")
    until(browser, "document.querySelectorAll('#activity li.record').length === 50", "the first page")
    until(browser, "document.querySelector('[data-chart=\"actions\"]')", "the charts")
    both_widths(browser, "cockpit-4-activity-and-charts")
    no_serious_findings(browser)

    # Page back through all of it.
    while browser.find_element("id", "activity-older").is_displayed():
        before = browser.execute_script("return document.querySelectorAll('#activity li.record').length")
        browser.find_element("id", "activity-older").click()
        until(browser, f"document.querySelectorAll('#activity li.record').length > {before}", "an older page")
        wait_until(
            lambda: browser.execute_script(
                "return !document.getElementById('activity-summary').textContent.includes('older ones below')"
                " || !document.getElementById('activity-older').hidden"
            ),
            "the summary",
            10,
            0.1,
        )
    assert browser.execute_script("return document.querySelectorAll('#activity li.record').length") == 150
    ids = browser.execute_script(
        "return [...document.querySelectorAll('#activity li.record')].map((n) => n.dataset.id)"
    )
    assert len(set(ids)) == 150

    # Filter: Mastodon, refused, from Telegram.
    Select(browser.find_element("id", "f-platform")).select_by_value("mastodon")
    Select(browser.find_element("id", "f-outcome")).select_by_value("refused")
    Select(browser.find_element("id", "f-origin")).select_by_value("telegram")
    until(
        browser,
        "[...document.querySelectorAll('#activity li.record')].every((n) => n.textContent.includes('Refused to post on Mastodon') && n.textContent.includes('from Telegram'))"
        " && document.querySelectorAll('#activity li.record').length > 0",
        "the filtered lines",
    )
    wanted = [i for i in range(150) if i % 3 == 0 and i % 5 == 0 and i % 4 == 1]
    assert browser.execute_script("return document.querySelectorAll('#activity li.record').length") == len(
        wanted
    )
    shot(browser, "cockpit-5-filtered")
    browser.find_element("css selector", "#activity-filters button[type=reset]").click()
    search = browser.find_element("id", "f-q")
    search.send_keys("about tea", Key.ENTER)
    until(browser, "document.querySelectorAll('#activity li.record').length === 15", "the search results")
    assert all(
        "about tea" in t
        for t in browser.execute_script(
            "return [...document.querySelectorAll('#activity li.record q')].map((n) => n.textContent)"
        )
    )
    both_widths(browser, "cockpit-6-search")

    # Read the charts' values from their labels.
    legend = browser.execute_script(
        "return [...document.querySelectorAll('[data-chart=\"actions\"] text[data-platform]')].map((n) => n.textContent)"
    )
    assert sorted(legend) == sorted([f"Bluesky: {counts['bsky']}", f"Mastodon: {counts['mastodon']}"])
    day_totals = browser.execute_script(
        "return [...document.querySelectorAll('[data-chart=\"actions\"] text[data-day]')].map((n) => Number(n.textContent))"
    )
    assert sum(day_totals) == counts["bsky"] + counts["mastodon"]
    yesterday = time.strftime("%Y-%m-%d", time.gmtime(now - 86400))
    assert text_of(browser, f'[data-chart="cost"] text[data-day="{yesterday}"]') == "$0.25"
    assert "daily budget $1.00" in text_of(browser, '[data-chart="cost"]')
    assert text_of(browser, '[data-chart="quotas"] text[data-row="bsky:post"]') == "2 of 10"
    assert text_of(browser, '[data-chart="quotas"] text[data-row="mastodon:post"]') == "15 of 15"
    browser.execute_script("document.getElementById('charts-section').scrollIntoView()")
    both_widths(browser, "cockpit-7-charts")


def test_an_approval_shows_every_field_the_reply_it_answers_and_what_the_turn_had_read(
    redis_urls,
    dashboard,
    browser,
):
    """A held reply as the router stores it (protocol.approvals): the full payload, the post
    it answers fenced with its author, the outside text the asking turn had read, the expiry."""
    admin = redis_urls.admin_client()
    now = time.time()
    approval_id = "c" * 32
    record = {
        "id": approval_id,
        "command": {},
        "action": "CREATE_POST",
        "effect": {"platform": "moltbook", "kind": "reply", "target": "post-41"},
        "text": "Harmless words",
        "payload": [
            {"field": "title", "label": "title", "value": "FREE CRYPTO for everyone"},
            {"field": "text", "label": "text", "value": "Harmless words"},
            {"field": "url", "label": "link", "value": "https://phish.example/claim"},
            {"field": "reply_to", "label": "in reply to", "value": "post-41"},
        ],
        "read": ["a Moltbook post by @mallory", "notifications"],
        "origin": {
            "kind": "stranger",
            "via": "mention",
            "author": "@mallory",
            "post": "post-41",
            "taint": [],
        },
        "reason": "a stranger's turn may only reply to their own post",
        "conversation": "mention:moltbook",
        "requested_at": now - 60,
        "expires_at": now + 3600,
        "state": "pending",
        "router_id": "r1",
    }
    admin.set(KEYS.approval(approval_id), json.dumps(record))
    admin.zadd(KEYS.approvals_pending, {approval_id: now + 3600})
    browser.set_window_size(*DESKTOP)
    browser.get(dashboard + f"#token={TOKEN}")
    card = f'.approval[data-id="{approval_id}"]'
    until(browser, f"document.querySelector('{card}')", "the approval card")
    shown = text_of(browser, card)
    for expected in (
        "Reply on Moltbook",
        "FREE CRYPTO for everyone",
        "https://phish.example/claim",
        "In reply to @mallory (their words, not yours)",
        "a Moltbook post by @mallory",
        "Why it waits: a stranger's turn may only reply to their own post",
        "expires",
    ):
        assert expected in shown, expected
    assert browser.execute_script(f"return document.querySelector('{card} .replied').textContent").count(
        "post-41"
    )
    browser.execute_script(f"document.querySelector('{card}').scrollIntoView()")
    both_widths(browser, "cockpit-8-full-payload")
    no_serious_findings(browser)


def test_the_content_security_policy_stops_an_inline_script_in_the_page(redis_urls, dashboard, browser):
    """Were markup ever to get in, the browser itself refuses to run an inline script or handler."""
    browser.get(dashboard + f"#token={TOKEN}")
    until(browser, "document.getElementById('band').dataset.level !== 'unknown'", "the band")
    browser.execute_script(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective));"
        "const s = document.createElement('script'); s.textContent = 'window.__ran = 1'; document.body.append(s);"
        "const i = document.createElement('img'); i.setAttribute('onerror', 'window.__ran = 2'); i.src = 'data:,'; document.body.append(i);"
    )
    until(
        browser,
        "window.__violations.filter((v) => v.startsWith('script-src')).length >= 2",
        "the policy to report the script and the handler",
    )
    assert browser.execute_script("return window.__ran") is None


def test_the_autonomy_panel_says_on_last_next_paused_and_lists_the_cycles(
    redis_urls, dashboard, browser, tmp_path
):
    now = time.time()
    workspace = tmp_path / "workspace"
    (workspace / "autonomy").mkdir(parents=True)
    (workspace / "logs").mkdir()
    (tmp_path / "config.json").write_text(
        json.dumps({"channels": {"autonomy": {"enabled": True, "cycle_interval": 900}}})
    )
    pause = {"reason": "quota_exceeded", "since": now - 60, "until": now + 3600, "detail": "moltbook posts"}
    (workspace / "autonomy" / "state.json").write_text(
        json.dumps({"cycle_count": 12, "last_cycle_at": now - 60, "pause": pause})
    )
    cycles = [
        {
            "ts": now - 1860,
            "cycle": 10,
            "outcome": "acted",
            "new_items": 3,
            "public": [{"action": "x"}],
            "usd": 0.012,
        },
        {"ts": now - 960, "cycle": 11, "outcome": "rested", "new_items": 0},
        {"ts": now - 60, "cycle": 12, "outcome": "paused:quota_exceeded", "detail": "moltbook posts"},
    ]
    (workspace / "logs" / "activity.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cycles))
    redis_urls.admin_client().set(
        KEYS.agent_autonomy,
        json.dumps(
            {
                "timestamp": now,
                "current_action": "idle",
                "action_started_at": now,
                "cycle_count": 12,
                "last_cycle_at": now - 60,
                "cycle_interval": 900,
                "pid": 1,
                "paused": "quota_exceeded",
            }
        ),
    )
    browser.set_window_size(*DESKTOP)
    browser.get(dashboard + f"#token={TOKEN}")
    until(browser, "document.querySelectorAll('#cycles li[data-outcome]').length === 3", "the last cycles")
    facts = text_of(browser, "#autonomy")
    assert "Enabledyes" in facts and "#12 at" in facts and "paused: today's quota is used up" in facts
    assert "Pausedtoday's quota is used up, until" in facts and "(moltbook posts)" in facts
    first = text_of(browser, "#cycles li")
    assert first.startswith("Cycle 12") and "paused: today's quota is used up" in first
    assert "3 new item(s) read, 1 public action(s), $0.0120" in text_of(browser, "#cycles li:last-child")
    assert (
        browser.execute_script("return document.querySelector('[data-part=\"autonomy\"]').dataset.state")
        == "warn"
    )
    browser.execute_script("document.getElementById('autonomy-section').scrollIntoView()")
    both_widths(browser, "cockpit-9-autonomy")
    no_serious_findings(browser)


def test_opening_without_the_token_asks_for_it_and_keeps_it_in_the_tab_only(redis_urls, dashboard, browser):
    browser.set_window_size(*PHONE)
    browser.get(dashboard)
    until(browser, "!document.getElementById('token-form').hidden", "the token form")
    shot(browser, "cockpit-0-token-form-phone")
    no_serious_findings(browser)
    field = browser.find_element("id", "token-input")
    field.send_keys("wrong-token-0123456789", Key.ENTER)
    until(
        browser, "document.getElementById('error').textContent.includes('token')", "the wrong token refused"
    )
    browser.refresh()
    until(browser, "!document.getElementById('token-form').hidden", "the token form again")
    browser.find_element("id", "token-input").send_keys(TOKEN, Key.ENTER)
    until(browser, "document.getElementById('band').dataset.level === 'red'", "the band (no router: red)")
    assert "No router is running" in text_of(browser, "#parts")
    assert browser.execute_script("return document.cookie") == ""
    assert TOKEN not in browser.current_url
    browser.set_window_size(*DESKTOP)


def test_the_agents_keys_holding_bytes_that_are_not_text_never_hide_the_kill_switch_or_dry_run(
    redis_urls, dashboard, browser, tmp_path
):
    """The agent's login may write its own keys (heartbeat, cost, autonomy) with any bytes: bytes
    that are not UTF-8 once made every status read fail, and the page showed no kill switch."""
    admin = redis_urls.admin_client()
    agent = redis.Redis.from_url(redis_urls.agent_url)
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="true")
    browser.set_window_size(*DESKTOP)
    with WorkerThread(settings, discover_skills(), {}):
        for key in (KEYS.agent_heartbeat, KEYS.agent_cost, KEYS.agent_autonomy):
            agent.set(key, b"\xff\xfe{\"ts\": \x80 not text")
        admin.set(KEYS.kill_switch, json.dumps({"on": True, "by": "dashboard", "ts": time.time()}))
        browser.get(dashboard + f"#token={TOKEN}")
        until(browser, "document.getElementById('band').dataset.level === 'red'", "the red kill-switch band")
        assert browser.execute_script("return document.getElementById('kill-state').dataset.on") == "true"
        assert text_of(browser, "#kill-toggle") == "Resume posting"
        assert "Dry run" in text_of(browser, "#dry-run") + text_of(browser, "#band")
        parts = text_of(browser, "#parts")
        assert "Agent" in parts and "Router" in parts, parts
        both_widths(browser, "cockpit-7-agent-keys-not-text")
