"""Fixtures of the local-action tests: the local web pages, a real Chromium, process checks."""

from __future__ import annotations

import os

import pytest

from agent.actions import ActionContext, ActionError
from agent.config.reader import Section
from agent.config.sections import BrowserSettings
from agent.llm.scripted.llm import ScriptedLLM
from tests.agent.actions.processes import children_of
from tests.support.web_pages import PageServer

LOCAL_BROWSER = {"allow_private_addresses": True, "page_load_timeout": 10, "total_timeout": 40}


def browser_settings(browser=None, env=None) -> BrowserSettings:
    """The `browser` section as config.json would give it (LOCAL_BROWSER by default), with `env`."""
    return BrowserSettings.parse(Section(dict(browser or LOCAL_BROWSER), "test config", "browser"), env or {})


@pytest.fixture
def chromium():
    """Skip (with the reason) when Chromium or chromedriver is not installed."""
    from agent.actions.browser_vision import DEFAULT_CHROMEDRIVER, DEFAULT_CHROMIUM, find_binary

    try:
        return (
            find_binary(os.environ.get("SAFECLAW_CHROMIUM", ""), "SAFECLAW_CHROMIUM", DEFAULT_CHROMIUM, "chromium"),
            find_binary(os.environ.get("SAFECLAW_CHROMEDRIVER", ""), "SAFECLAW_CHROMEDRIVER", DEFAULT_CHROMEDRIVER,
                        "chromium-driver"),
        )
    except ActionError as exc:
        pytest.skip(f"real browser tests need Chromium and chromedriver: {exc}")


@pytest.fixture
def pages():
    server = PageServer().start()
    yield server
    server.stop()


@pytest.fixture
def make_ctx(workspace):
    def make(browser=None, env=None, llm=None):
        return ActionContext(workspace, llm or ScriptedLLM([]), "test", browser_settings(browser, env))

    return make


@pytest.fixture
def browser_sessions(monkeypatch):
    """Record each session the action opens: its chromedriver pid, browser pids, profile dir."""
    from agent.actions import browser_vision as module

    opened: list[dict] = []
    real_open = module.open_driver

    def recording_open(*args, **kwargs):
        session = real_open(*args, **kwargs)
        pid = session.service_pid
        browser_pids = children_of(pid) if pid else []
        opened.append({"session": session, "service_pid": pid, "browser_pids": browser_pids,
                       "profile_dir": session.profile_dir})
        return session

    monkeypatch.setattr(module, "open_driver", recording_open)
    return opened
