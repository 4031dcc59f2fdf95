"""The router's one settings object, loaded once at the entry point from env + `router/.env`
(`router.config.env_sources` reads, checks and merges the two)."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from protocol.env_files import SettingError, parse_bool
from protocol.hidden import HiddenValues
from protocol.keys import Keys
from protocol.redis_address import AddressError, parse_address
from protocol.redis_cluster import untagged_on_cluster
from protocol.redis_safety import ACCEPT_EVICTION_SETTING
from router.bounds.settings import BoundsSettings
from router.config.env_sources import check_setting_names, merged_environment
from router.config.values import DAY_SECONDS, MAX_COUNT, MAX_SECONDS, no_repeats, whole_number
from router.errors import ConfigError

ROUTER_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = ROUTER_DIR.parent
DEFAULT_ENV_FILE = ROUTER_DIR / ".env"
_RATE_LIMIT = re.compile(r"^\s*([^=\s][^=]*?)\s*=\s*(\S+?)\s*/\s*(\S+)\s*$")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class RateLimit:
    limit: int  # at most this many commands of one action...
    window_seconds: int  # ...per fixed window of this many seconds


@dataclass(frozen=True)
class RouterSettings:
    redis_url: str = field(repr=False)  # redis://router:PASS@host:port/0
    keys: Keys
    router_id: str  # names this router's processing list and heartbeat; keep it stable across restarts
    reply_ttl: int = 3600  # seconds a reply waits on its key for the agent
    max_attempts: int = 3  # crashes of one command before it goes to the dead-letter list
    data_dir: Path = ROUTER_DIR  # files the router owns (notes.jsonl, outbox)
    dry_run: bool = False
    kill_switch: bool = False  # True: every effect that writes is denied
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)  # action or effect scope -> rule
    require_approval: frozenset[str] = frozenset()  # actions / effect scopes answered pending_approval
    log_file: Path = REPO_ROOT / "logs" / "router.log"
    log_level: str = "INFO"
    heartbeat_ttl: int = 15  # seconds; a router whose heartbeat is gone has its commands recovered
    idempotency_ttl: int = 7 * 24 * 3600  # seconds a side-effecting command's record is kept
    dead_letter_max: int = 1000  # entries kept in the dead-letter list (newest)
    dead_letter_ttl: int = 7 * 24 * 3600  # seconds an entry is kept
    platform_concurrency: int = 4  # commands run at once per platform (each platform its own lane)
    platform_backlog: int = 1000  # commands waiting per platform; past it a command is answered busy
    block_seconds: int = 1  # BLMOVE timeout: how fast the loop notices a stop request
    bounds: BoundsSettings = field(default_factory=BoundsSettings)  # quotas, pacing, duplicates, circuit
    audit_dir: Path = ROUTER_DIR / "audit"  # the hash-chained audit log, one file chain per router
    audit_max_bytes: int = 10 * 1024 * 1024  # rotate the active audit file past this size
    audit_key_file: Path = ROUTER_DIR / "audit.key"  # seals the audit checkpoints; made 0600 at start
    audit_sync_ms: int = 100  # group commit: audit lines are fsynced at most this long after written
    approval_ttl: int = 24 * 3600  # seconds a command waits for the owner's approval, then expires
    # Decisions relayed from a chat carry a code the agent process holds: whoever has the agent's
    # Redis login could approve. Off by default: decisions come from the control user (dashboard,
    # ./safeclaw approve|deny); true hands the code to the agent's chats, knowingly.
    chat_approvals: bool = False
    # An owner turn that read outside text publishes only words the owner wrote, else it waits for
    # the owner (router.whose_words). False is the only way off; logged at start.
    approve_tainted_writes: bool = True
    max_pending_approvals: int = 1000  # held commands waiting at once, all conversations; then `busy`
    max_pending_per_conversation: int = 50  # held commands waiting at once from one conversation
    # The one eviction policy the owner accepts for a Redis dedicated to SafeClaw (protocol.redis_safety).
    redis_accept_eviction: str = ""
    # Replicas that must hold a claim before its effect, and the done record before its reply
    # (router.queue.replica_wait), and how long the router waits for them.
    redis_min_replicas: int = 0
    redis_replica_timeout_ms: int = 1000
    # The merged environment, secrets included: kept as HiddenValues, which never print a value.
    env: Mapping[str, str] = field(default_factory=HiddenValues, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.env, HiddenValues):
            object.__setattr__(self, "env", HiddenValues(self.env))

    @property
    def redis_password(self) -> str:
        if not self.redis_url:
            return ""
        return str(parse_address(self.redis_url).options.get("password") or "")  # as redis-py sends it

    @classmethod
    def load(
        cls, env_file: Path | None = DEFAULT_ENV_FILE, environ: Mapping[str, str] | None = None
    ) -> RouterSettings:
        """The process environment wins over `router/.env`, but for policy settings: there the
        stricter of the two holds (and an empty value never weakens one)."""
        return cls.from_env(merged_environment(env_file, environ))

    @classmethod
    def from_env(cls, env: Mapping[str, str], require_redis: bool = True) -> RouterSettings:
        """`require_redis=False` (the one-shot CLI): REDIS_URL may be unset; it is then ""."""
        check_setting_names(env)
        redis_url = env.get("REDIS_URL", "").strip()
        if not redis_url and not require_redis:
            return cls._build(env, "")
        if not redis_url:
            raise ConfigError(
                "REDIS_URL is not set: put REDIS_URL=redis://router:PASSWORD@127.0.0.1:6379/0 in router/.env "
                "(see .env.example and `./safeclaw python -m router.config.redis_acl --help` for the users)"
            )
        try:
            address = parse_address(redis_url)
        except AddressError as exc:
            raise ConfigError(str(exc)) from None
        refusal = untagged_on_cluster(address, Keys.from_env(env))
        if refusal:
            raise ConfigError(refusal)
        return cls._build(env, redis_url)

    @classmethod
    def _build(cls, env: Mapping[str, str], redis_url: str) -> RouterSettings:
        keys = Keys.from_env(env)
        return cls(
            redis_url=redis_url,
            keys=keys,
            bounds=BoundsSettings.from_env(env),
            router_id=_router_id(env.get("ROUTER_ID", "")),
            reply_ttl=_int(env, "ROUTER_REPLY_TTL", 3600, minimum=1, maximum=30 * DAY_SECONDS),
            max_attempts=_int(env, "ROUTER_MAX_ATTEMPTS", 3, minimum=1, maximum=100),
            data_dir=_path(env.get("ROUTER_DATA_DIR"), ROUTER_DIR),
            dry_run=_bool(env, "ROUTER_DRY_RUN"),
            kill_switch=_bool(env, "ROUTER_KILL_SWITCH"),
            chat_approvals=_bool(env, "ROUTER_CHAT_APPROVALS", default=False),
            approve_tainted_writes=_bool(env, "ROUTER_APPROVE_TAINTED_WRITES", default=True),
            max_pending_approvals=_int(
                env, "ROUTER_MAX_PENDING_APPROVALS", 1000, minimum=1, maximum=MAX_COUNT
            ),
            max_pending_per_conversation=_int(
                env, "ROUTER_MAX_PENDING_PER_CONVERSATION", 50, minimum=1, maximum=MAX_COUNT
            ),
            rate_limits=parse_rate_limits(env.get("ROUTER_RATE_LIMITS", "")),
            require_approval=frozenset(
                a.strip() for a in env.get("ROUTER_REQUIRE_APPROVAL", "").split(",") if a.strip()
            ),
            log_file=_path(env.get("ROUTER_LOG_FILE"), REPO_ROOT / "logs" / "router.log"),
            log_level=_log_level(env),
            heartbeat_ttl=_int(env, "ROUTER_HEARTBEAT_TTL", 15, minimum=3, maximum=3600),
            platform_concurrency=_int(env, "ROUTER_PLATFORM_CONCURRENCY", 4, minimum=1, maximum=64),
            platform_backlog=_int(env, "ROUTER_PLATFORM_BACKLOG", 1000, minimum=0, maximum=1_000_000),
            dead_letter_max=_int(env, "ROUTER_DEAD_LETTER_MAX", 1000, minimum=1, maximum=1_000_000),
            dead_letter_ttl=_int(
                env, "ROUTER_DEAD_LETTER_TTL", 7 * DAY_SECONDS, minimum=60, maximum=MAX_SECONDS
            ),
            audit_dir=audit_directory(env),
            audit_max_bytes=_int(
                env, "ROUTER_AUDIT_MAX_BYTES", 10 * 1024 * 1024, minimum=1024, maximum=1 << 40
            ),
            audit_key_file=audit_key_file(env),
            audit_sync_ms=_int(env, "ROUTER_AUDIT_SYNC_MS", 100, minimum=1, maximum=60_000),
            approval_ttl=_int(env, "ROUTER_APPROVAL_TTL", DAY_SECONDS, minimum=60, maximum=30 * DAY_SECONDS),
            redis_accept_eviction=env.get(ACCEPT_EVICTION_SETTING, "").strip(),
            redis_min_replicas=_int(env, "ROUTER_REDIS_MIN_REPLICAS", 0, minimum=0, maximum=16),
            redis_replica_timeout_ms=_int(env, "ROUTER_REDIS_REPLICA_TIMEOUT_MS", 1000, minimum=1,
                                          maximum=60_000),
            env=dict(env),
        )


def audit_directory(env: Mapping[str, str]) -> Path:
    """ROUTER_AUDIT_DIR, else `audit/` in the router's data folder."""
    data_dir = _path(env.get("ROUTER_DATA_DIR"), ROUTER_DIR)
    return _path(env.get("ROUTER_AUDIT_DIR"), data_dir / "audit")


def audit_key_file(env: Mapping[str, str]) -> Path:
    """ROUTER_AUDIT_KEY_FILE, else `audit.key` in the router's data folder (never in the audit folder:
    whoever can only write the log must not be able to read the key that seals its checkpoints)."""
    data_dir = _path(env.get("ROUTER_DATA_DIR"), ROUTER_DIR)
    return _path(env.get("ROUTER_AUDIT_KEY_FILE"), data_dir / "audit.key")


def parse_rate_limits(text: str) -> dict[str, RateLimit]:
    """`NOTE=30/60,*:post=5/3600`: at most 30 NOTE per 60 s, 5 posts per hour on all platforms.

    Names are checked against the registry and the effect vocabulary by `router.policy.Policy`."""
    limits: dict[str, RateLimit] = {}
    names: list[str] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        match = _RATE_LIMIT.match(item)
        if match is None:
            raise ConfigError(f"ROUTER_RATE_LIMITS: {item!r} is not ACTION=COUNT/SECONDS (e.g. NOTE=30/60)")
        name, count, window = match.groups()
        names.append(name)
        limits[name] = RateLimit(
            whole_number("ROUTER_RATE_LIMITS", count, 0, MAX_COUNT, item),
            whole_number("ROUTER_RATE_LIMITS", window, 1, MAX_SECONDS, item),
        )
    no_repeats("ROUTER_RATE_LIMITS", names)
    return limits


def _log_level(env: Mapping[str, str]) -> str:
    level = (env.get("ROUTER_LOG_LEVEL") or "INFO").strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(f"ROUTER_LOG_LEVEL: {level!r} is not one of {', '.join(LOG_LEVELS)}")
    return level


def _path(value: str | None, default: Path) -> Path:
    """A relative path is taken from the repository root, so the router runs the same from anywhere."""
    if not value:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path


def _router_id(value: str) -> str:
    value = value.strip()
    if not value:
        return f"{socket.gethostname()}-{os.getpid()}"
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value):
        raise ConfigError("ROUTER_ID may hold only letters, digits, '_', '.', '-' (at most 64)")
    return value


def _int(env: Mapping[str, str], name: str, default: int, minimum: int, maximum: int) -> int:
    raw = env.get(name, "").strip()
    return whole_number(name, raw, minimum, maximum) if raw else default


def _bool(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    try:
        return parse_bool(name, env.get(name), default)
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
