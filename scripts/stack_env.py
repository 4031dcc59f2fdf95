"""The two environments `./safeclaw` gives its children: each side gets only what it needs.

The agent never gets a platform credential (even one exported in the user's shell) and the
router never gets the agent's LLM keys or bot token. Each gets REDIS_URL with its own user.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from protocol.atomic_file import write_atomically
from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from protocol.env_files import merge_sources, parse_bool, read_env_file, stricter_bool

__all__ = ["read_env_file"]  # the one dotenv reader, re-exported for the scripts

CREDENTIAL_VARIABLES = frozenset(n for names in PLATFORM_CREDENTIAL_VARIABLES.values() for n in names)
# The agent's own secrets: the router has no use for them.
AGENT_ONLY_VARIABLES = frozenset({"OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "TELEGRAM_BOT_TOKEN",
                                  "OLLAMA_API_KEY", "SAFECLAW_SCRIPTED_REPLIES"})
# The router's own Redis login, when the user gives one in the shell: the agent must not hold it
# (with it the agent could take commands and forge the router's replies).
ROUTER_ONLY_VARIABLES = frozenset({"SAFECLAW_ROUTER_REDIS_URL"})
DEFAULT_ROUTER_ID = "safeclaw-local"  # stable, so a restart recovers this router's processing list


def merged(file_values: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The process environment wins over the dotenv file, as python-dotenv does by default (the
    router's policy settings merge by strictness: `protocol.env_files.merge_sources`)."""
    return {**file_values, **environ}


def platforms_with_credentials(env: Mapping[str, str]) -> list[str]:
    return sorted(p for p, names in PLATFORM_CREDENTIAL_VARIABLES.items() if all(env.get(n) for n in names))


def agent_environment(environ: Mapping[str, str], redis_url: str, llm_provider: str | None) -> dict[str, str]:
    """What the agent process gets: the shell's environment minus every platform credential."""
    env = {k: v for k, v in environ.items()
           if k not in CREDENTIAL_VARIABLES | ROUTER_ONLY_VARIABLES and not k.startswith("ROUTER_")}
    env["REDIS_URL"] = redis_url
    if llm_provider:
        env["SAFECLAW_LLM_PROVIDER"] = llm_provider
    return env


def router_environment(
    environ: Mapping[str, str], router_file: Mapping[str, str], redis_url: str
) -> tuple[dict[str, str], bool]:
    """What the router process gets, and whether dry_run is on.

    dry_run stays as set in router/.env or the environment; unset, it is on while no platform
    has all its credentials, so a new user can watch the agent post without an account.
    """
    env = {k: v for k, v in environ.items() if k not in AGENT_ONLY_VARIABLES}
    env["REDIS_URL"] = redis_url
    settings = merged(router_file, env)
    if not settings.get("ROUTER_DRY_RUN", "").strip():
        env["ROUTER_DRY_RUN"] = "false" if platforms_with_credentials(settings) else "true"
    if not settings.get("ROUTER_ID", "").strip():
        env["ROUTER_ID"] = DEFAULT_ROUTER_ID
    # as the router will read it: the stricter of the file and the environment
    policy = merge_sources(router_file, env, {"ROUTER_DRY_RUN": stricter_bool(True)}).values
    return env, parse_bool("ROUTER_DRY_RUN", policy.get("ROUTER_DRY_RUN"))


def write_runtime_env(path: Path, values: Mapping[str, str]) -> None:
    """A git-ignored dotenv file (mode 0600) so `./safeclaw status` can reach the running stack."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = "# written by ./safeclaw for the running stack; do not edit\n"
    text += "".join(f"{key}={value}\n" for key, value in values.items())
    write_atomically(path, text.encode("utf-8"), durable=False)
