"""Outside text on the dashboard never executes: every field the page shows (post and approval
texts, activity lines, platform and router names, rules, governance files, the kill switch's
author, cost, autonomy's action) is filled with markup, script, `javascript:` links and quotes
that break out of attributes, in a real headless Chromium. The page must show each as text,
create no element from it and run none of it. Screenshots go to tests/artifacts/dashboard/."""

from __future__ import annotations

import json
import time

import pytest

from protocol.keys import Keys
from tests.dashboard.conftest import shot, until
from tests.dashboard.helpers import TOKEN

pytestmark = pytest.mark.slow
KEYS = Keys()
PAYLOADS = [
    '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    "<script>window.__xss=1</script>",
    '"><svg onload=window.__xss=1>',
    "' onmouseover='window.__xss=1' data-x='",
    "javascript:window.__xss=1",
    '<a href="javascript:window.__xss=1">click me</a>',
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    "</pre><style>body{display:none}</style><pre>",
]
ALL = " ".join(PAYLOADS)
APPROVAL_ID = "b" * 32
# Elements and attributes none of the page's own code makes: any of them means markup got in.
# The page's own links are http(s) only; its own scripts are its static modules.
INJECTED = (
    "return document.querySelectorAll('img, svg script, svg [onload], iframe, style, object, embed, "
    'a:not([href^="http"]):not(.skip), script:not([src^="/static/"]), [onerror], [onload], '
    "[onmouseover], [data-x]').length"
)


def _seed(admin, governance_dir) -> None:
    now = time.time()
    admin.set(
        KEYS.agent_heartbeat,
        json.dumps(
            {
                "ts": now,
                "llm_provider": PAYLOADS[0],
                "llm_model": PAYLOADS[2],
                "llm": {"ok": False, "error": ALL},
                "channels": PAYLOADS,
            }
        ),
    )
    admin.set(
        KEYS.router_heartbeat(PAYLOADS[3]),
        json.dumps(
            {"ts": now, "router_id": PAYLOADS[3], "skills": [], "platforms_with_credentials": PAYLOADS}
        ),
    )
    admin.set(KEYS.kill_switch, json.dumps({"on": True, "by": PAYLOADS[1], "ts": now}))
    admin.set(
        KEYS.agent_cost,
        json.dumps({"today_usd": PAYLOADS[0], "calls_today": PAYLOADS[5], "tokens_today": PAYLOADS[6]}),
    )
    admin.set(
        KEYS.agent_autonomy,
        json.dumps(
            {
                "timestamp": now,
                "current_action": PAYLOADS[0],
                "action_started_at": now,
                "cycle_count": 3,
                "last_cycle_at": now,
                "cycle_interval": 60,
                "pid": 1,
                "paused": PAYLOADS[4],
            }
        ),
    )
    for i, payload in enumerate(PAYLOADS):
        admin.xadd(KEYS.audit_stream, {"line": json.dumps(_audit(payload, i, now))})
    record = {
        "id": APPROVAL_ID,
        "command": {},
        "action": PAYLOADS[2],
        "effect": {"platform": PAYLOADS[0], "kind": PAYLOADS[3], "target": PAYLOADS[4]},
        "text": ALL,
        "conversation": PAYLOADS[5],
        "requested_at": now,
        "expires_at": now + 3600,
        "state": "pending",
        "router_id": "r1",
    }
    admin.set(KEYS.approval(APPROVAL_ID), json.dumps(record))
    admin.zadd(KEYS.approvals_pending, {APPROVAL_ID: now + 3600})
    admin.lpush(KEYS.rule_injections, json.dumps({"rule": ALL, "why": PAYLOADS[3], "author": "x", "ts": now}))
    governance_dir.mkdir(parents=True, exist_ok=True)
    (governance_dir / "DOS.md").write_text("# DOS\n" + "\n".join(PAYLOADS) + "\n", encoding="utf-8")
    proposal = {"number": 1, "rule": ALL, "why": PAYLOADS[1], "accepted_at": None}
    (governance_dir / "proposals.json").write_text(json.dumps([proposal]), encoding="utf-8")


def _audit(payload: str, i: int, now: float) -> dict[str, object]:
    return {
        "ts": now - 10 + i,
        "seq": i + 1,
        "action": payload,
        "status": "ok",
        "decision": payload,
        "text": payload,
        "url": payload if payload.startswith("javascript:") else f"{payload} https://x.example/{i}",
        "origin": {"channel": "x", "conversation": payload},
        "effect": {"platform": payload, "kind": "post"},
    }


def _no_script_ran_and_nothing_injected(driver) -> None:
    assert driver.execute_script("return window.__xss === undefined")
    assert driver.execute_script(INJECTED) == 0
    assert driver.execute_script("return getComputedStyle(document.body).display") != "none"


def test_outside_text_in_every_field_shows_as_text_and_never_runs(
    redis_urls,
    dashboard,
    browser,
    tmp_path,
):
    admin = redis_urls.admin_client()
    _seed(admin, tmp_path / "workspace" / "governance")
    browser.get(dashboard + f"#token={TOKEN}")
    until(browser, f"document.querySelector('.approval[data-id=\"{APPROVAL_ID}\"]')", "the approval")
    until(browser, "document.querySelectorAll('#activity li').length >= 8", "the activity feed")
    until(browser, "document.querySelector('#proposals li')", "the proposal")
    for details in browser.find_elements("css selector", "#governance details summary"):
        details.click()  # open each governance file, as the owner would to read it
    shot(browser, "xss-1-every-field")
    _no_script_ran_and_nothing_injected(browser)
    sections = {
        "parts": [PAYLOADS[0], PAYLOADS[3]],
        "approvals": PAYLOADS,
        "activity": PAYLOADS,
        "governance": PAYLOADS,
        "kill-state": [PAYLOADS[1]],
    }
    for section, expected in sections.items():
        text = browser.execute_script(f"return document.getElementById('{section}').textContent")
        for payload in expected:
            assert payload in text, f"{payload!r} not shown as text in #{section}"

    # A line arriving on the live stream after the page loaded, and a rule typed by the owner.
    admin.xadd(KEYS.audit_stream, {"line": json.dumps(_audit(PAYLOADS[0] + " live", 99, time.time()))})
    until(
        browser,
        "document.getElementById('activity').textContent.includes('onerror=\"window.__xss=(window.__xss||0)+1\"> live')",
        "the live line",
    )
    browser.find_element("id", "rule-text").send_keys(PAYLOADS[2] + PAYLOADS[6])
    browser.find_element("id", "rule-why").send_keys(PAYLOADS[3])
    browser.find_element("css selector", "#rule-form button[type=submit]").click()
    until(browser, "document.getElementById('rule-result').textContent.startsWith('added')", "the rule added")
    until(browser, "document.getElementById('injected').children.length === 2", "both injected rules listed")
    # Hover and click over everything shown, as a curious owner would.
    browser.execute_script(
        "document.querySelectorAll('#activity li, #approvals li, #injected li, #parts li').forEach((n) => {"
        " n.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); n.click(); })"
    )
    shot(browser, "xss-2-after-live-line-and-typed-rule")
    _no_script_ran_and_nothing_injected(browser)
    assert PAYLOADS[2] + PAYLOADS[6] in browser.execute_script(
        "return document.getElementById('injected').textContent"
    )
