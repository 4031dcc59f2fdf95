"""_BROWSER_VISION: open a web page in headless Chromium and save what it shows.

The page is opened through Selenium: a remote WebDriver at REMOTE_BROWSER_SERVER (a Selenium
Grid or a standalone chromedriver) when set, else a local Chromium driven by its chromedriver,
both binaries given by path so Selenium Manager never tries to download anything.
Every request the browser makes goes through `GuardProxy` (agent/actions/guard_proxy.py),
which checks it against the URL guard before it leaves; the page's address is checked again
right before and right after the capture, and nothing is saved if it moved somewhere refused.
It saves the HTML, a screenshot and the visible text under output/, and summarises the text
itself (`llm_summary`, in the same turn). The page text is untrusted: the result carries none of
it (only a sanitised title, the sanitiser's flags and the summary, made from the text sanitised
and fenced).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.actions.browser_session import DEFAULT_CHROMEDRIVER as DEFAULT_CHROMEDRIVER
from agent.actions.browser_session import DEFAULT_CHROMIUM as DEFAULT_CHROMIUM
from agent.actions.browser_session import BrowserSession, Deadline, close_session, first_line
from agent.actions.browser_session import find_binary as find_binary
from agent.actions.browser_session import open_driver as open_driver
from agent.actions.consent import dismiss_consent_banners
from agent.actions.context import ActionContext, ActionError
from agent.actions.guard_proxy import GuardProxy
from agent.actions.summary import llm_summary
from agent.actions.unreachable import NET_ERROR_HINTS
from agent.actions.url_guard import CheckedURL
from agent.config.sections import BrowserSettings
from agent.errors import AgentError
from agent.workspace.folder import write_bytes_atomic, write_text_atomic
from protocol.untrusted import sanitise_text

log = logging.getLogger("safeclaw.agent.browser")

SCRIPT_TIMEOUT = 10.0
MAX_TEXT_CHARS = 500_000
MAX_HTML_CHARS = 5_000_000
_NET_ERROR = re.compile(r"\b(?:net::)?(ERR_[A-Z0-9_]+)\b")
_PAGE_STATE = """
const nav = performance.getEntriesByType('navigation')[0];
return {href: location.href, ready: document.readyState,
        status: nav && typeof nav.responseStatus === 'number' ? nav.responseStatus : null,
        error_text: location.href.startsWith('chrome-error:') && document.body
                    ? document.body.innerText.slice(0, 2000) : ''};
"""


@dataclass
class PageCapture:
    final_url: str
    title: str
    html: str
    text: str
    png: bytes
    consent_clicked: list[str]


def navigate(driver: Any, url: str, page_load_timeout: float, deadline: Deadline) -> None:
    """Load `url`; ActionError for a timeout, a network error page or an HTTP error status."""
    from selenium.common.exceptions import TimeoutException, WebDriverException

    remaining = deadline.remaining()
    timeout = min(page_load_timeout, remaining)
    bound = "browser.page_load_timeout" if page_load_timeout <= remaining else "browser.total_timeout"
    driver.set_page_load_timeout(timeout)
    driver.set_script_timeout(min(SCRIPT_TIMEOUT, deadline.remaining()))
    try:
        driver.get(url)
    except TimeoutException:
        raise ActionError(f"the page did not load within {timeout:.3g} s ({bound})") from None
    except WebDriverException as exc:
        raise ActionError(describe_net_error(url, exc.msg or str(exc))) from None
    state = driver.execute_script(_PAGE_STATE)
    if str(state.get("href", "")).startswith("chrome-error:"):
        raise ActionError(describe_net_error(url, str(state.get("error_text", ""))))
    status = state.get("status")
    if isinstance(status, int) and status >= 400:
        raise ActionError(f"the server answered HTTP {status} for {url}; no page saved")


def describe_net_error(url: str, detail: str) -> str:
    match = _NET_ERROR.search(detail)
    if not match:
        return f"could not open {url}: {first_line(detail) or 'the browser showed an error page'}"
    code = match.group(1)
    hint = NET_ERROR_HINTS.get(code)
    return f"could not open {url}: {hint} ({code})" if hint else f"could not open {url}: {code}"


def wait_until_complete(driver: Any, deadline: Deadline) -> None:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, min(5.0, deadline.remaining()), poll_frequency=0.1).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
    except TimeoutException:
        log.info("page never reached readyState complete; capturing it as it is")


def check_page_address(driver: Any, proxy: GuardProxy) -> str:
    """The page's current address, if the guard allows it; else ActionError (nothing is saved)."""
    address = str(driver.current_url)
    try:
        proxy.check_page_url(address)
    except ActionError as exc:
        raise ActionError(f"the page moved to a refused address; no page saved ({exc})") from None
    return address


def capture_page(session: BrowserSession, checked: CheckedURL, browser: BrowserSettings,
                 deadline: Deadline, proxy: GuardProxy) -> PageCapture:
    driver = session.driver
    navigate(driver, checked.url, browser.page_load_timeout, deadline)
    check_page_address(driver, proxy)
    wait_until_complete(driver, deadline)
    clicked = dismiss_consent_banners(driver)
    deadline.remaining()
    wait_until_complete(driver, deadline)
    # Checked just before and just after: a page that moves in between is not saved either.
    before = check_page_address(driver, proxy)
    text = driver.execute_script("return document.body ? document.body.innerText : ''") or ""
    capture = PageCapture(
        final_url=before,
        title=str(driver.title or ""),
        html=str(driver.page_source or "")[:MAX_HTML_CHARS],
        text=str(text)[:MAX_TEXT_CHARS],
        png=driver.get_screenshot_as_png(),
        consent_clicked=clicked,
    )
    if check_page_address(driver, proxy) != before:
        raise ActionError("the page moved while it was being captured; no page saved")
    return capture


def save_capture(output_dir: Path, capture: PageCapture) -> dict[str, str]:
    """Write .html, .png and .txt under output/ with a name no other call shares."""
    output_dir.mkdir(parents=True, exist_ok=True)
    stem = f"browser_vision-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    write_text_atomic(output_dir / f"{stem}.html", capture.html)
    write_bytes_atomic(output_dir / f"{stem}.png", capture.png)
    write_text_atomic(output_dir / f"{stem}.txt", capture.text)
    return {kind: f"output/{stem}.{kind}" for kind in ("html", "png", "txt")}


def browser_vision(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    browser = ctx.browser
    proxy = GuardProxy(browser.allow_private_addresses, browser.test_hosts, browser.proxy_listen)
    checked = proxy.check_page_url(params.get("url"))
    if ctx.sinks is not None:  # where the owner's data may go: the address, then each request
        refusal = ctx.sinks.address_refusal(checked.url)
        if refusal is not None:
            raise ActionError(refusal)
        proxy.sinks = ctx.sinks.for_page(checked.url)
    deadline = Deadline(browser.total_timeout)
    from selenium.common.exceptions import WebDriverException

    with proxy:
        session = open_driver(browser, deadline, f"{browser.proxy_address}:{proxy.port}")
        try:
            capture = capture_page(session, checked, browser, deadline, proxy)
        except WebDriverException as exc:
            detail = first_line(exc.msg or type(exc).__name__)
            raise ActionError(f"the browser failed while reading {checked.url}: {detail}") from None
        except ActionError as exc:
            if proxy.log.unreachable and not proxy.refused_summary():
                raise ActionError(describe_net_error(checked.url, proxy.log.unreachable[0][1])) from None
            raise ActionError(f"{exc}{proxy.refusals_note()}") from None
        finally:
            close_session(session)
    files = save_capture(ctx.workspace.output_dir, capture)
    title = sanitise_text(capture.title, 300)
    page = sanitise_text(capture.text, MAX_TEXT_CHARS)
    reasons = list(dict.fromkeys(title.reasons + page.reasons))
    log.info("browser vision saved %s (%d chars, flagged=%s)", files["txt"], len(capture.text), bool(reasons))
    return {
        "url": checked.url,
        "final_url": sanitise_text(capture.final_url, 2048).text,
        "title": title.text,
        "files": files,
        "consent_dismissed": len(capture.consent_clicked),
        "flagged": bool(reasons),
        "flag_reasons": reasons,
        "blocked_requests": proxy.refused_summary(),
        **summarise(files["txt"], ctx),
    }


def summarise(text_file: str, ctx: ActionContext) -> dict[str, Any]:
    """The page's summary (as _LLM_SUMMARY gives it); a failed summary leaves the visit saved."""
    try:
        summary = llm_summary({"content": text_file}, ctx)
    except AgentError as exc:  # an LLM failure, the budget: the page is saved, say why no summary
        return {"summary_error": str(exc)}
    return {"summary": summary["output"], **({"summary_source_flagged": summary["source_flagged"]}
                                             if "source_flagged" in summary else {})}
