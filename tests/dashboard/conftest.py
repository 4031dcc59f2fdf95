"""Fixtures of the dashboard's browser tests: headless Chromium (Selenium) and the real dashboard
process on the test's redis-server, with its workspace under the test's tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scripts.stack_dashboard import DashboardPlan, wait_until_serving
from scripts.stack_redis import free_port
from tests.dashboard.helpers import TOKEN
from tests.router.router_helpers import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "tests" / "artifacts" / "dashboard"


def chromium_paths() -> tuple[str, str]:
    found = [
        os.environ.get("SAFECLAW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium",
        os.environ.get("SAFECLAW_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver",
    ]
    if not all(os.path.isfile(p) and os.access(p, os.X_OK) for p in found):
        pytest.skip(
            "the browser test needs chromium and chromium-driver (scripts/install_system_packages.sh)"
        )
    return found[0], found[1]


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    profile = Path(tempfile.mkdtemp(prefix="safeclaw-dashboard-chromium-"))
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = binary
    service = Service(executable_path=driver_path, log_output=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def dashboard(redis_urls, tmp_path):
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REDIS_URL": redis_urls.control_url,
        "DASHBOARD_TOKEN": TOKEN,
        "DASHBOARD_PORT": str(port),
        "SAFECLAW_LOG_DIR": str(tmp_path / "logs"),
        "SAFECLAW_WORKSPACE": str(tmp_path / "workspace"),
        "DASHBOARD_AUDIT_DIR": str(tmp_path / "audit"),
        "SAFECLAW_CONFIG": str(tmp_path / "config.json"),
    }
    log = (tmp_path / "dashboard.stderr").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO_ROOT / "dashboard" / "start_dashboard.py"),
            "--env-file",
            "/nonexistent.env",
        ],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    plan = DashboardPlan(env, "127.0.0.1", port, None)
    assert wait_until_serving(plan, lambda: process.poll() is None), (
        tmp_path / "dashboard.stderr"
    ).read_text()
    yield plan.address
    process.terminate()
    process.wait(timeout=20)
    log.close()


def shot(driver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def until(driver, script: str, what: str, seconds: float = 20.0):
    """Poll a JavaScript expression in the page until it is truthy."""
    return wait_until(lambda: driver.execute_script(f"return {script}"), what, seconds, 0.1)


def pill_text(driver, selector: str) -> str:
    """Read in one step: the live stream may redraw the status bar between a find and a .text."""
    return str(driver.execute_script(f"return document.querySelector('{selector}').textContent"))
