"""_BROWSER_VISION through a remote WebDriver: a standalone `chromedriver --port` process."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request

import pytest

from agent.actions.browser_vision import browser_vision
from tests.agent.actions.processes import children_of, still_running
from tests.support.web_pages import NORMAL_TEXT

pytestmark = pytest.mark.slow


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_ready(url, process, seconds=20):
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if process.poll() is not None:
            raise RuntimeError(f"chromedriver exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url + "/status", timeout=1) as response:
                if json.load(response)["value"]["ready"]:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("chromedriver did not become ready")


@pytest.fixture
def remote_chromedriver(chromium):
    port = free_port()
    process = subprocess.Popen([chromium[1], f"--port={port}", "--allowed-ips=127.0.0.1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, process)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_remote_webdriver_opens_the_page_and_ends_its_session(remote_chromedriver, pages, make_ctx, workspace,
                                                              monkeypatch):
    url, process = remote_chromedriver
    from agent.actions import browser_vision as module

    sessions = []
    real_open = module.open_driver

    def recording_open(*args, **kwargs):
        session = real_open(*args, **kwargs)
        sessions.append((session, children_of(process.pid)))
        return session

    monkeypatch.setattr(module, "open_driver", recording_open)

    result = browser_vision({"url": pages.url("/normal")}, make_ctx(env={"REMOTE_BROWSER_SERVER": url}))

    assert NORMAL_TEXT in workspace.output_file(result["files"]["txt"]).read_text(encoding="utf-8")
    assert workspace.output_file(result["files"]["png"]).read_bytes().startswith(b"\x89PNG")
    session, browser_pids = sessions[0]
    assert session.service is None and session.profile_dir is None  # nothing local was started
    assert browser_pids, "the remote chromedriver should have started a browser"
    assert still_running(browser_pids) == []  # the session was quit
    assert process.poll() is None  # the remote server itself is not ours to stop
