"""The agent's settings: config.json (no secrets) plus the environment (secrets, Redis, hosts).

`load_settings()` runs once at the entry point: it reads the environment (the only place in the
agent that does) and parses every section into typed settings (`agent/config/sections.py` and
`channel_sections.py`), with errors that name the file and the key. The result is passed down,
never global; each part receives its own section (`settings.llm`, `settings.browser`,
`settings.channels.telegram`, …).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent.config.channel_sections import ChannelSettings
from agent.config.reader import Env, Section, env_text
from agent.config.sections import DEFAULT_MODELS, LLM_PROVIDERS, BrowserSettings, LLMSettings
from agent.cost.budget import BudgetSettings
from agent.errors import ConfigError
from agent.workspace.bounds import DEFAULT_MAX_REPLY_CHARS
from agent.workspace.folder import Workspace, read_json, write_json_atomic
from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from protocol.keys import Keys
from protocol.redis_address import AddressError, parse_address

AGENT_DIR = Path(__file__).resolve().parents[1]
CONFIG_TEMPLATE = AGENT_DIR / "config" / "initial.json"
DEFAULT_CONFIG = AGENT_DIR / "config.json"
# The top-level keys of config.json; a new section adds its key here and its parse below.
TOP_LEVEL_KEYS = ("llm", "timeout", "max_steps", "max_format_retries", "max_reply_chars",
                  "budget", "browser", "channels")


@dataclass(frozen=True)
class AgentSettings:
    config_path: Path
    workspace: Workspace
    llm: LLMSettings = field(default_factory=LLMSettings)
    browser: BrowserSettings = field(default_factory=BrowserSettings)
    channels: ChannelSettings = field(default_factory=ChannelSettings)
    timeout: float = 10.0  # seconds: router response wait and command time-to-live
    max_steps: int = 5
    max_format_retries: int = 2
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS  # of one model reply (agent.workspace.bounds)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    redis_url: str | None = field(default=None, repr=False)  # holds the agent's Redis password
    keys: Keys = field(default_factory=Keys)
    redis_accept_eviction: str = ""  # REDIS_ACCEPT_EVICTION: the evicting policy accepted (redis_safety)
    # Names of platform credential variables found in the environment (refused at start; doctor shows them).
    platform_credentials: tuple[str, ...] = ()

    def secrets(self) -> list[str]:
        """Every secret value the agent holds, for the log redactor."""
        values = [*self.llm.secrets(), self.channels.telegram.bot_token]
        return list(dict.fromkeys(v for v in [*values, *redis_passwords(self.redis_url)] if v))  # each once


def redis_passwords(url: str | None) -> list[str]:
    """The Redis password as written in the URL and as sent (percent-decoded), for the redactor."""
    if not url:
        return []
    written = urlsplit(url).password or ""
    try:
        sent = str(parse_address(url).options.get("password") or "")
    except AddressError:
        sent = ""
    return [written, sent]


def read_environment() -> dict[str, str]:
    """The process environment: entry points read it here, once, and pass it to the functions below."""
    return dict(os.environ)


def config_path_from_env(env: Env) -> Path:
    return Path(env["SAFECLAW_CONFIG"]) if env.get("SAFECLAW_CONFIG") else DEFAULT_CONFIG


def load_config_file(path: Path) -> dict[str, Any]:
    """Read config.json, copying the template there first if it does not exist yet."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CONFIG_TEMPLATE, path)
    try:
        data = read_json(path, None, unique_keys=True)
    except Exception as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def platform_credentials_in(env: Env) -> tuple[str, ...]:
    return tuple(
        sorted(name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names if env.get(name))
    )


def check_no_platform_credentials(env: Env) -> None:
    """The agent holds no social-network credential, ever: refuse to start if one is present."""
    present = platform_credentials_in(env)
    if present:
        raise ConfigError(
            f"{', '.join(present)} must not be in the agent's environment: platform credentials belong "
            "to the router alone (router/.env). Remove them from agent/.env and the agent's shell."
        )


def settings_from_config(data: Mapping[str, Any], path: Path, env: Env) -> AgentSettings:
    """Parse every section of config.json (and its environment overrides) into typed settings."""
    root = Section.root(data, path)
    root.refuse_unknown(TOP_LEVEL_KEYS)
    return AgentSettings(
        config_path=path,
        workspace=Workspace.from_env(env),
        llm=LLMSettings.parse(root.child("llm"), env),
        browser=BrowserSettings.parse(root.child("browser"), env),
        channels=ChannelSettings.parse(root.child("channels"), env),
        timeout=root.number("timeout", 10, 1, 600),
        max_steps=root.whole("max_steps", 5, 1, 50),
        max_format_retries=root.whole("max_format_retries", 2, 0, 10),
        max_reply_chars=root.whole("max_reply_chars", DEFAULT_MAX_REPLY_CHARS, 1024, 4 * 1024 * 1024),
        budget=BudgetSettings.from_config(data.get("budget"), path),
        redis_url=env_text(env, "REDIS_URL") or None,
        keys=Keys.from_env(env),
        redis_accept_eviction=env_text(env, "REDIS_ACCEPT_EVICTION"),
        platform_credentials=platform_credentials_in(env),
    )


def load_settings(env: Env | None = None) -> AgentSettings:
    env = read_environment() if env is None else env
    check_no_platform_credentials(env)
    path = config_path_from_env(env)
    return settings_from_config(load_config_file(path), path, env)


def llm_settings_from_env(env: Env) -> LLMSettings:
    """Only the `llm` section (and its variables), for tools that need no more (`agent.llm.select`)."""
    path = config_path_from_env(env)
    return LLMSettings.parse(Section.root(load_config_file(path), path).child("llm"), env)


# Interactive configuration -------------------------------------------------------------
Ask = Callable[[str], str]
Say = Callable[[str], None]


def ask_valid(ask: Ask, say: Say, question: str, default: str, parse: Callable[[str], Any]) -> Any:
    """Ask until `parse` accepts the answer; an empty answer keeps the default."""
    while True:
        answer = ask(f"{question} [{default}]: ").strip() or default
        try:
            return parse(answer)
        except ValueError as exc:
            say(f"  {exc}. Try again.")


def _parse_timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of seconds") from None
    if not 1 <= value <= 600:
        raise ValueError("the timeout must be from 1 to 600 seconds")
    return int(value) if value.is_integer() else value


def _parse_provider(text: str) -> str:
    if text not in LLM_PROVIDERS:
        raise ValueError(f"choose one of {', '.join(LLM_PROVIDERS)}")
    return text


def _parse_model(text: str) -> str:
    if not text or any(c.isspace() for c in text):
        raise ValueError("a model name has no spaces and is not empty")
    return text


def configure(key: str, path: Path, ask: Ask = input, say: Say = print) -> dict[str, Any]:
    """Ask for the settings under `key` (timeout | llm), validate them, save config.json."""
    data = load_config_file(path)
    if key == "timeout":
        data["timeout"] = ask_valid(
            ask,
            say,
            "Seconds to wait for the router (and a command's lifetime)",
            str(data.get("timeout", 10)),
            _parse_timeout,
        )
    elif key == "llm":
        llm = dict(data.get("llm") or {})
        provider = ask_valid(
            ask,
            say,
            f"LLM provider ({'/'.join(LLM_PROVIDERS)})",
            str(llm.get("provider", "ollama")),
            _parse_provider,
        )
        default_model = llm.get("model") if provider == llm.get("provider") else DEFAULT_MODELS[provider]
        llm["provider"] = provider
        llm["model"] = ask_valid(ask, say, "Model", str(default_model), _parse_model)
        data["llm"] = llm
    else:
        raise ConfigError(f"unknown config key {key!r}; known: timeout, llm, telegram")
    write_json_atomic(path, data)
    say(f"Saved to {path}:")
    say(json.dumps({key: data[key]}, indent=2))
    return data
