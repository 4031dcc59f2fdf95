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
import os
import re
import shutil
import signal
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.actions import ActionContext, ActionError
from agent.actions.consent import dismiss_consent_banners
from agent.actions.guard_proxy import GuardProxy
from agent.actions.url_guard import CheckedURL
from agent.config_sections import BrowserSettings
from agent.workspace import write_bytes_atomic, write_text_atomic
from protocol.untrusted import sanitise_text

log = logging.getLogger("safeclaw.agent.browser")

DEFAULT_CHROMIUM = "/usr/bin/chromium"
DEFAULT_CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_ARGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--disable-default-apps", "--mute-audio", "--window-size=1280,1024",
    # Chromium's own services (updates, sign-in, safe browsing, translation…) would only be refused.
    "--disable-client-side-phishing-detection", "--disable-domain-reliability", "--no-pings",
    "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,SafeBrowsing",
    "--safebrowsing-disable-auto-update", "--disable-search-engine-choice-screen",
)
SCRIPT_TIMEOUT = 10.0
MAX_TEXT_CHARS = 500_000
MAX_HTML_CHARS = 5_000_000
_NET_ERROR = re.compile(r"\b(?:net::)?(ERR_[A-Z0-9_]+)\b")
NET_ERROR_HINTS = {
    "ERR_CONNECTION_REFUSED": "connection refused: nothing is listening at that address",
    "ERR_NAME_NOT_RESOLVED": "the host name does not resolve",
    "ERR_CONNECTION_TIMED_OUT": "the connection timed out",
    "ERR_TIMED_OUT": "the connection timed out",
    "ERR_CONNECTION_RESET": "the connection was reset",
    "ERR_ADDRESS_UNREACHABLE": "the address is unreachable",
    "ERR_INTERNET_DISCONNECTED": "there is no network connection",
    "ERR_CERT_AUTHORITY_INVALID": "the site's TLS certificate is not trusted",
    "ERR_UNSAFE_PORT": "the browser refuses that port",
}
_PAGE_STATE = """
const nav = performance.getEntriesByType('navigation')[0];
return {href: location.href, ready: document.readyState,
        status: nav && typeof nav.responseStatus === 'number' ? nav.responseStatus : null,
        error_text: location.href.startsWith('chrome-error:') && document.body
                    ? document.body.innerText.slice(0, 2000) : ''};
"""


@dataclass
class BrowserSession:
    """A running WebDriver session and what must be cleaned up after it."""

    driver: Any
    service: Any = None  # the local chromedriver Service, None for a remote WebDriver
    profile_dir: Path | None = None  # fresh Chromium profile, removed on close
    closed: bool = field(default=False, repr=False)

    @property
    def service_pid(self) -> int | None:
        process = getattr(self.service, "process", None)
        return process.pid if process is not None else None


@dataclass
class PageCapture:
    final_url: str
    title: str
    html: str
    text: str
    png: bytes
    consent_clicked: list[str]


class Deadline:
    """The total time bound of one visit."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            raise ActionError(f"the visit took longer than browser.total_timeout ({self.seconds:g} s)")
        return left


def find_binary(configured: str, variable: str, default: str, package: str) -> str:
    """The path of a browser binary: `configured` (from $variable), else `default`, else found on PATH."""
    candidates = [configured] if configured else [default, shutil.which(Path(default).name) or ""]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    where = configured or default
    raise ActionError(
        f"{Path(default).name} not found at {where}: install the {package} package, set {variable} "
        "to its path, or set REMOTE_BROWSER_SERVER to a Selenium Grid / chromedriver URL"
    )


def chrome_options(profile_dir: Path | None, binary: str | None, proxy: str) -> Any:
    """Options whose every request goes through the guard proxy at `proxy` (host:port), loopback too."""
    from selenium.webdriver import ChromeOptions

    options = ChromeOptions()
    for argument in CHROME_ARGS:
        options.add_argument(argument)
    options.add_argument(f"--proxy-server=http://{proxy}")
    options.add_argument("--proxy-bypass-list=<-loopback>")  # no implicit bypass for localhost
    options.add_argument("--force-webrtc-ip-handling-policy=disable_non_proxied_udp")
    if profile_dir is not None:
        options.add_argument(f"--user-data-dir={profile_dir}")
    if binary is not None:
        options.binary_location = binary
    options.page_load_strategy = "normal"
    return options


def open_driver(browser: BrowserSettings, deadline: Deadline, proxy: str) -> BrowserSession:
    """Start a WebDriver session: remote at REMOTE_BROWSER_SERVER, else local Chromium."""
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.remote.client_config import ClientConfig
    from urllib3.exceptions import HTTPError

    remote = browser.remote_server
    session = BrowserSession(driver=None)
    try:
        if remote:
            if not remote.startswith(("http://", "https://")):
                raise ActionError(f"REMOTE_BROWSER_SERVER must be an http(s) URL, not {remote!r}")
            address = remote
            options = chrome_options(None, None, proxy)
        else:
            binary = find_binary(browser.chromium, "SAFECLAW_CHROMIUM", DEFAULT_CHROMIUM, "chromium")
            driver_path = find_binary(
                browser.chromedriver, "SAFECLAW_CHROMEDRIVER", DEFAULT_CHROMEDRIVER, "chromium-driver")
            session.profile_dir = Path(tempfile.mkdtemp(prefix="safeclaw-chromium-"))
            options = chrome_options(session.profile_dir, binary, proxy)
            session.service = Service(executable_path=driver_path, log_output=os.devnull)
            session.service.start()
            address = session.service.service_url
        config = ClientConfig(remote_server_addr=address, timeout=int(deadline.remaining()) + 10)
        session.driver = webdriver.Remote(command_executor=address, options=options, client_config=config)
        return session
    except ActionError:
        close_session(session)
        raise
    except (WebDriverException, HTTPError, OSError) as exc:
        close_session(session)
        where = f"the remote WebDriver at {remote}" if remote else "the local Chromium"
        detail = getattr(exc, "msg", None) or str(exc)
        raise ActionError(f"could not start {where}: {first_line(detail)}") from None


def close_session(session: BrowserSession) -> None:
    """Quit the browser, stop chromedriver, remove the profile; never raises, safe to repeat."""
    if session.closed:
        return
    session.closed = True
    if session.driver is not None:
        try:
            session.driver.quit()
        except Exception as exc:  # a dead driver must not keep us from cleaning up the rest
            log.info("driver.quit failed: %s", first_line(str(exc)))
    if session.service is not None:
        try:
            session.service.stop()
        except Exception as exc:
            log.info("chromedriver stop failed: %s", first_line(str(exc)))
    if session.profile_dir is not None:
        kill_profile_processes(session.profile_dir)
        shutil.rmtree(session.profile_dir, ignore_errors=True)


def kill_profile_processes(profile_dir: Path) -> None:
    """Kill any Chromium process still using our own fresh profile (left by a crashed driver)."""
    marker = f"--user-data-dir={profile_dir}".encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


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
    return f"could not open {url}: {code}" + (f" ({hint})" if hint else "")


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
    from agent.actions.summary import llm_summary
    from agent.errors import AgentError

    try:
        summary = llm_summary({"content": text_file}, ctx)
    except AgentError as exc:  # an LLM failure, the budget: the page is saved, say why no summary
        return {"summary_error": str(exc)}
    return {"summary": summary["output"], **({"summary_source_flagged": summary["source_flagged"]}
                                             if "source_flagged" in summary else {})}
