"""The dashboard's one settings object, from the environment and `dashboard/.env`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from protocol.env_files import SettingError, check_names, parse_bool, read_env_file
from protocol.hidden import HiddenValues
from protocol.keys import Keys
from protocol.redis_address import AddressError, parse_address

DASHBOARD_DIR = Path(__file__).resolve().parent
REPO_ROOT = DASHBOARD_DIR.parent
DEFAULT_ENV_FILE = DASHBOARD_DIR / ".env"
MIN_TOKEN_CHARS = 16
OWN_SETTINGS = (
    "DASHBOARD_HOST", "DASHBOARD_PORT", "DASHBOARD_TOKEN", "DASHBOARD_TOKEN_FILE", "DASHBOARD_PUBLIC_READ",
    "DASHBOARD_ORIGIN", "DASHBOARD_GOVERNANCE_DIR", "DASHBOARD_WORKSPACE_DIR", "DASHBOARD_AUDIT_DIR",
    "DASHBOARD_LOG_FILE",
)  # fmt: skip
READ_SETTINGS = (
    *OWN_SETTINGS, "REDIS_URL", "REDIS_USER", "REDIS_PASSWORD_FILE", "SAFECLAW_WORKSPACE", "SAFECLAW_LOG_DIR",
    "SAFECLAW_CONFIG", "ROUTER_AUDIT_DIR", "ROUTER_DATA_DIR", "COMMAND_QUEUE", "RESPONSE_PREFIX",
    "REDIS_ACCEPT_EVICTION",
)  # fmt: skip


class ConfigError(Exception):
    """A setting is missing or wrong; the message names it and says how to fix it."""


@dataclass(frozen=True)
class DashboardSettings:
    # redis://control:PASS@host:port/0 (the control user: never agent's or router's)
    redis_url: str = field(repr=False)
    token: str = field(repr=False)  # DASHBOARD_TOKEN: every /api request carries it as a Bearer token
    keys: Keys
    host: str = "127.0.0.1"
    port: int = 8080
    public_read: bool = False  # DASHBOARD_PUBLIC_READ=true: GET endpoints without the token
    origin: str = ""  # DASHBOARD_ORIGIN: the address the owner opens, when not a loopback name
    governance_dir: Path = REPO_ROOT / "workspace" / "governance"
    workspace_dir: Path = REPO_ROOT / "workspace"  # read only: activity.jsonl, cost.jsonl, autonomy
    audit_dir: Path | None = None  # the routers' audit files, for paging past the Redis copy
    agent_config: Path | None = None  # the agent's config.json (autonomy on or off, its interval)
    log_file: Path = REPO_ROOT / "logs" / "dashboard.log"
    redis_accept_eviction: str = ""  # the one evicting policy accepted (protocol.redis_safety)
    env: Mapping[str, str] = field(default_factory=HiddenValues, repr=False)  # secrets included

    def __post_init__(self) -> None:
        if not isinstance(self.env, HiddenValues):
            object.__setattr__(self, "env", HiddenValues(self.env))

    @classmethod
    def load(
        cls, env_file: Path | None = DEFAULT_ENV_FILE, environ: Mapping[str, str] | None = None
    ) -> DashboardSettings:
        environ = os.environ if environ is None else environ
        try:
            file_values = read_env_file(env_file)
            where = env_file.name if env_file is not None else "the env file"
            check_names(file_values, READ_SETTINGS, f"dashboard/{where}", "DASHBOARD_")
            # Near misses of the dashboard's own names only: the environment holds everything else too.
            check_names(environ, OWN_SETTINGS, "the environment", "DASHBOARD_", bare=())
        except SettingError as exc:
            raise ConfigError(str(exc)) from None
        return cls.from_env({**file_values, **environ})

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DashboardSettings:
        redis_url = env.get("REDIS_URL", "").strip()
        if not redis_url:
            raise ConfigError(
                "REDIS_URL is not set: the dashboard needs the control user's login, "
                "REDIS_URL=redis://control:PASSWORD@127.0.0.1:6379/0 (./safeclaw sets it)"
            )
        try:
            address = parse_address(redis_url)
        except AddressError as exc:
            raise ConfigError(str(exc)) from None
        if address.username in ("agent", "router"):
            raise ConfigError(
                "REDIS_URL names the agent's or the router's Redis user; the dashboard must "
                "log in as the control user"
            )
        token = env.get("DASHBOARD_TOKEN", "").strip()
        if not token and env.get("DASHBOARD_TOKEN_FILE"):
            token = _read_token(Path(env["DASHBOARD_TOKEN_FILE"]))
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(
                f"DASHBOARD_TOKEN must be set, at least {MIN_TOKEN_CHARS} characters "
                "(or DASHBOARD_TOKEN_FILE naming a file that holds it); ./safeclaw makes one"
            )
        if not re.fullmatch(r"[\x21-\x7e]+", token):
            raise ConfigError(
                "DASHBOARD_TOKEN must be printable ASCII without spaces (what an Authorization "
                "header carries intact); ./safeclaw makes one"
            )
        workspace = Path(env.get("SAFECLAW_WORKSPACE") or REPO_ROOT / "workspace")
        governance = Path(env.get("DASHBOARD_GOVERNANCE_DIR") or workspace / "governance")
        if env.get("DASHBOARD_WORKSPACE_DIR"):
            workspace = Path(env["DASHBOARD_WORKSPACE_DIR"])
        elif env.get("DASHBOARD_GOVERNANCE_DIR") and not env.get("SAFECLAW_WORKSPACE"):
            workspace = governance.parent
        log_dir = Path(env["SAFECLAW_LOG_DIR"]) if env.get("SAFECLAW_LOG_DIR") else REPO_ROOT / "logs"
        return cls(
            redis_url=redis_url,
            token=token,
            keys=Keys.from_env(env),
            redis_accept_eviction=env.get("REDIS_ACCEPT_EVICTION", "").strip(),
            host=env.get("DASHBOARD_HOST", "").strip() or "127.0.0.1",
            port=_port(env.get("DASHBOARD_PORT", "")),
            public_read=_bool(env.get("DASHBOARD_PUBLIC_READ", ""), "DASHBOARD_PUBLIC_READ"),
            origin=_origin(env.get("DASHBOARD_ORIGIN", "")),
            governance_dir=governance,
            workspace_dir=workspace,
            audit_dir=_audit_dir(env),
            agent_config=_agent_config(env, workspace),
            log_file=Path(env.get("DASHBOARD_LOG_FILE") or log_dir / "dashboard.log"),
            env=dict(env),
        )


def _origin(raw: str) -> str:
    """`scheme://host[:port]`, lower case, as a browser sends it in an Origin header."""
    raw = raw.strip().rstrip("/")
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        raise ConfigError(
            f"DASHBOARD_ORIGIN must be the address you open the dashboard at, like "
            f"https://claw.example.net or http://192.168.1.5:8080 (no path), not {raw!r}"
        )
    return f"{parts.scheme}://{parts.netloc}".lower()


def _audit_dir(env: Mapping[str, str]) -> Path | None:
    """Where the routers write their audit files, when this machine can read them: DASHBOARD_AUDIT_DIR,
    else the router's own settings (ROUTER_AUDIT_DIR, ROUTER_DATA_DIR/audit, router/audit)."""
    for raw in (env.get("DASHBOARD_AUDIT_DIR"), env.get("ROUTER_AUDIT_DIR")):
        if raw:
            return Path(raw)
    data = env.get("ROUTER_DATA_DIR")
    return Path(data) / "audit" if data else REPO_ROOT / "router" / "audit"


def _agent_config(env: Mapping[str, str], workspace: Path) -> Path:
    """SAFECLAW_CONFIG, else agent/config.json, else the config.json beside the workspace (compose)."""
    if env.get("SAFECLAW_CONFIG"):
        return Path(env["SAFECLAW_CONFIG"])
    local = REPO_ROOT / "agent" / "config.json"
    return local if local.exists() else workspace.parent / "config.json"


def _read_token(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"DASHBOARD_TOKEN_FILE {path}: {exc.strerror}") from None


def _port(raw: str) -> int:
    raw = raw.strip()
    if not raw:
        return 8080
    if not raw.isdigit() or not 0 <= int(raw) <= 65535:
        raise ConfigError(f"DASHBOARD_PORT must be a port number (0-65535), not {raw!r}")
    return int(raw)


def _bool(raw: str, name: str) -> bool:
    try:
        return parse_bool(name, raw)
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
