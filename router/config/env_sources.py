"""Which names the router reads, and where from: `router/.env` checked line by line and name by
name (a misspelt ROUTER_ setting stops the router), then merged with the process environment, where
the environment wins but for policy settings: there the stricter of the two holds."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from protocol.env_files import (
    SettingError,
    Stricter,
    check_names,
    merge_sources,
    read_env_file,
    refuse_if_different,
    stricter_bool,
    stricter_number,
    stricter_union,
)
from router.errors import ConfigError

# Every variable the router reads whose name starts with ROUTER_. Any other ROUTER_ name (a typo,
# another case) stops the router: a misspelt ROUTER_KILL_SWITCH must not quietly mean "off".
KNOWN_SETTINGS = frozenset(
    {
        "ROUTER_ID", "ROUTER_ENV_FILE", "ROUTER_REPLY_TTL", "ROUTER_MAX_ATTEMPTS", "ROUTER_DATA_DIR",
        "ROUTER_DRY_RUN", "ROUTER_KILL_SWITCH", "ROUTER_RATE_LIMITS", "ROUTER_REQUIRE_APPROVAL",
        "ROUTER_LOG_FILE", "ROUTER_LOG_LEVEL", "ROUTER_HEARTBEAT_TTL", "ROUTER_PLATFORM_CONCURRENCY",
        "ROUTER_PLATFORM_BACKLOG", "ROUTER_DEAD_LETTER_MAX", "ROUTER_DEAD_LETTER_TTL", "ROUTER_AUDIT_DIR",
        "ROUTER_AUDIT_MAX_BYTES", "ROUTER_AUDIT_KEY_FILE", "ROUTER_AUDIT_SYNC_MS", "ROUTER_APPROVAL_TTL",
        "ROUTER_CHAT_APPROVALS", "ROUTER_APPROVE_TAINTED_WRITES", "ROUTER_MAX_PENDING_APPROVALS",
        "ROUTER_MAX_PENDING_PER_CONVERSATION", "ROUTER_REDIS_MIN_REPLICAS", "ROUTER_REDIS_REPLICA_TIMEOUT_MS",
        "REDIS_ACCEPT_EVICTION",
        # the hard bounds (router.bounds.settings)
        "ROUTER_QUOTAS", "ROUTER_PACING", "ROUTER_MOLTBOOK_ACCOUNT_CREATED", "ROUTER_DUPLICATE_THRESHOLD",
        "ROUTER_DUPLICATE_DAYS", "ROUTER_DUPLICATE_SCOPE", "ROUTER_CIRCUIT_FAILURES",
        "ROUTER_CIRCUIT_OPEN_SECONDS",
    }
)
# Everything else a router's own env file may hold: its Redis login and key names, the platforms'
# credentials and their endpoints. Any other name in router/.env stops the router.
ENV_FILE_NAMES = KNOWN_SETTINGS | frozenset(
    {"REDIS_URL", "COMMAND_QUEUE", "RESPONSE_PREFIX", "BSKY_APPVIEW", "BSKY_SERVICE", "MOLTBOOK_API_BASE",
     "X_API_BASE", "REDDIT_URL", "REDDIT_OAUTH_URL"}
    | {name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names}
)
# The settings that restrict what the router does, each with which of two values is the stricter:
# an empty value never weakens one, and disagreeing sources give the stricter.
POLICY_SETTINGS: dict[str, Stricter] = {
    "ROUTER_KILL_SWITCH": stricter_bool(True),
    "ROUTER_DRY_RUN": stricter_bool(True),
    "ROUTER_CHAT_APPROVALS": stricter_bool(False),
    "ROUTER_APPROVE_TAINTED_WRITES": stricter_bool(True),
    "ROUTER_MAX_PENDING_APPROVALS": stricter_number(lower=True),
    "ROUTER_MAX_PENDING_PER_CONVERSATION": stricter_number(lower=True),
    "ROUTER_REDIS_MIN_REPLICAS": stricter_number(lower=False),
    "ROUTER_REQUIRE_APPROVAL": stricter_union,
    "ROUTER_DUPLICATE_THRESHOLD": stricter_number(lower=True),
    "ROUTER_DUPLICATE_DAYS": stricter_number(lower=False),
    "ROUTER_CIRCUIT_FAILURES": stricter_number(lower=True),
    "ROUTER_CIRCUIT_OPEN_SECONDS": stricter_number(lower=False),
    "ROUTER_RATE_LIMITS": refuse_if_different("ROUTER_RATE_LIMITS"),
    "ROUTER_QUOTAS": refuse_if_different("ROUTER_QUOTAS"),
    "ROUTER_PACING": refuse_if_different("ROUTER_PACING"),
    "ROUTER_DUPLICATE_SCOPE": refuse_if_different("ROUTER_DUPLICATE_SCOPE"),
}
log = logging.getLogger("router.config.env_sources")


def check_env_file(env_file: Path | None, refuse_unknown: bool = True) -> None:
    """A ConfigError for a line python-dotenv would skip or guess at, a misspelt setting, or (with
    `refuse_unknown`, for the router's own file) any name the router does not read."""
    _env_file_values(env_file, refuse_unknown)


def _env_file_values(env_file: Path | None, refuse_unknown: bool) -> dict[str, str]:
    try:
        values = read_env_file(env_file)
        if env_file is not None:
            check_names(values, ENV_FILE_NAMES, env_file.name, "ROUTER_", refuse_unknown=refuse_unknown)
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
    return values


def merged_environment(
    env_file: Path | None, environ: Mapping[str, str] | None = None, refuse_unknown: bool = True
) -> dict[str, str]:
    """router/.env checked and merged with the environment (see `RouterSettings.load`)."""
    file_values = _env_file_values(env_file, refuse_unknown)
    label = env_file.name if env_file is not None else "the env file"
    try:
        environ = os.environ if environ is None else environ
        merged = merge_sources(file_values, environ, POLICY_SETTINGS, label)
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
    for note in merged.notes:
        log.warning("%s", note)
    return merged.values


def check_setting_names(env: Mapping[str, str]) -> None:
    """A ConfigError for the first name that misspells a router setting: another case, `-` or `.`
    for `_`, a look-alike letter, ROUTERS_ for ROUTER_, or a policy setting without its prefix."""
    unknown_router = sorted(n for n in env if n.strip().strip("'\"").upper().startswith("ROUTER_")
                            and n not in KNOWN_SETTINGS)
    try:
        check_names(env, KNOWN_SETTINGS, "the router's settings", prefix="ROUTER_", bare=POLICY_SETTINGS)
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
    if unknown_router:
        name = unknown_router[0]
        raise ConfigError(
            f"{name!r} is not a router setting (the router's settings are listed in .env.example); "
            "the router does not guess: it stops"
        )
