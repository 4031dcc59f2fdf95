"""A browser session for _BROWSER_VISION: headless Chromium started locally or on a remote WebDriver,
its every request sent through the guard proxy, and everything it started cleaned up.

Both binaries are given by path so Selenium Manager never tries to download anything.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.actions.context import ActionError
from agent.config.sections import BrowserSettings

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

# The profile's preferences. A page never writes a file on this machine: every download is blocked
# (3 = all downloads). WebRTC sends no UDP but through the proxy, which has none: the command-line
# switch above is ignored by some Chromium builds, the preference is not (a page's STUN requests
# reached 127.0.0.1 without it).
BROWSER_PREFS = {
    "download_restrictions": 3,
    "webrtc.ip_handling_policy": "disable_non_proxied_udp",
    "webrtc.multiple_routes_enabled": False,
    "webrtc.nonproxied_udp_enabled": False,
}


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
    options.add_experimental_option("prefs", BROWSER_PREFS)
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
