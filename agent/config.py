"""The agent's settings: config.json (no secrets) plus the environment (secrets, Redis, hosts).

`load_settings()` runs once at the entry point; the result is passed down, never global.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.cost.budget import BudgetSettings
from agent.errors import ConfigError
from agent.workspace import Workspace, read_json, write_json_atomic
from protocol import PLATFORM_CREDENTIAL_VARIABLES, Keys

AGENT_DIR = Path(__file__).resolve().parent
CONFIG_TEMPLATE = AGENT_DIR / "config_initial.json"
DEFAULT_CONFIG = AGENT_DIR / "config.json"
LLM_PROVIDERS = ("ollama", "openai", "gemini", "local", "scripted")
DEFAULT_MODELS = {
    "ollama": "llama3.1:8b",
    "openai": "gpt-4o-mini",
    "gemini": "gemini-2.5-flash",
    "local": "smollm2-135m-instruct",
    "scripted": "scripted",
}


@dataclass
class AgentSettings:
    config_path: Path
    workspace: Workspace
    env: Mapping[str, str]
    llm_provider: str = "ollama"
    llm_model: str = "llama3.1:8b"
    llm_timeout: float = 120.0
    timeout: float = 10.0  # seconds: router response wait and command time-to-live
    max_steps: int = 5
    max_format_retries: int = 2
    browser: dict[str, Any] = field(default_factory=dict)
    channels: dict[str, Any] = field(default_factory=dict)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    redis_url: str | None = None
    keys: Keys = field(default_factory=Keys)


def config_path_from_env(env: Mapping[str, str]) -> Path:
    return Path(env["SAFECLAW_CONFIG"]) if env.get("SAFECLAW_CONFIG") else DEFAULT_CONFIG


def load_config_file(path: Path) -> dict[str, Any]:
    """Read config.json, copying the template there first if it does not exist yet."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CONFIG_TEMPLATE, path)
    try:
        data = read_json(path, None)
    except Exception as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def check_no_platform_credentials(env: Mapping[str, str]) -> None:
    """The agent holds no social-network credential, ever: refuse to start if one is present."""
    present = sorted(
        name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names if env.get(name)
    )
    if present:
        raise ConfigError(
            f"{', '.join(present)} must not be in the agent's environment: platform credentials belong "
            "to the router alone (router/.env). Remove them from agent/.env and the agent's shell."
        )


def _number(data: dict[str, Any], key: str, default: float, low: float, high: float, where: Path) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError(f"{where}: {key!r} must be a number from {low:g} to {high:g}, not {value!r}")
    return float(value)


def _object(data: dict[str, Any], key: str, where: Path) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key!r} must be an object, not {json.dumps(value)[:60]}")
    return dict(value)


def settings_from_config(data: dict[str, Any], path: Path, env: Mapping[str, str]) -> AgentSettings:
    llm = data.get("llm", {})
    if not isinstance(llm, dict):
        raise ConfigError(f"{path}: 'llm' must be an object")
    provider = env.get("SAFECLAW_LLM_PROVIDER") or llm.get("provider", "ollama")
    if provider not in LLM_PROVIDERS:
        raise ConfigError(f"{path}: llm.provider {provider!r} is not one of {', '.join(LLM_PROVIDERS)}")
    model = (
        env.get("SAFECLAW_LLM_MODEL")
        or (llm.get("model") if provider == llm.get("provider", "ollama") else None)
        or DEFAULT_MODELS[provider]
    )
    keys = Keys.from_env(env)
    return AgentSettings(
        config_path=path,
        workspace=Workspace.from_env(dict(env)),
        env=env,
        llm_provider=provider,
        llm_model=str(model),
        llm_timeout=_number(llm, "timeout", 120, 1, 3600, path),
        timeout=_number(data, "timeout", 10, 1, 600, path),
        max_steps=int(_number(data, "max_steps", 5, 1, 50, path)),
        max_format_retries=int(_number(data, "max_format_retries", 2, 0, 10, path)),
        browser=_object(data, "browser", path),
        channels=_object(data, "channels", path),
        budget=BudgetSettings.from_config(data.get("budget"), path),
        redis_url=env.get("REDIS_URL") or None,
        keys=keys,
    )


def load_settings(env: Mapping[str, str] | None = None) -> AgentSettings:
    env = os.environ if env is None else env
    check_no_platform_credentials(env)
    path = config_path_from_env(env)
    return settings_from_config(load_config_file(path), path, env)


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
