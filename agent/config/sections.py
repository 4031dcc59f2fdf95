"""The typed sections of config.json (`llm`, `browser`, `channels`), each with its environment overrides.

Each section is a frozen dataclass with `parse(section, env)`: it reads its keys through a
`Section` (errors name the file and the key), applies the variables that override or complete
it (hosts, keys, paths), and refuses keys it does not know. Only `agent/config/settings.py` calls them;
every other part receives its own section and never reads the environment.

To add a channel: a dataclass with `enabled` and `parse()` here, and one line in
`CHANNEL_SECTIONS` plus a field of `ChannelSettings`. To add a top-level section (say `budget`):
a dataclass with `parse()`, and one field and one line in `agent/config/settings.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent.channels.jetstream import DEFAULT_JETSTREAM_URL, JETSTREAM_URL_VARIABLE, is_did
from agent.config.reader import Env, Section, env_text
from agent.errors import ConfigError

LLM_PROVIDERS = ("ollama", "openai", "gemini", "local", "scripted")
DEFAULT_MODELS = {
    "ollama": "llama3.1:8b",
    "openai": "gpt-4o-mini",
    "gemini": "gemini-2.5-flash",
    "local": "smollm2-135m-instruct",
    "scripted": "scripted",
}
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
SUBMOLT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_SUBMOLTS = 10


def normalise_ollama_host(raw: str) -> str:
    """OLLAMA_HOST ("host", "host:port" or a URL) as a full URL, as the ollama client reads it."""
    host = raw.strip().rstrip("/")
    if not host:
        return DEFAULT_OLLAMA_HOST
    if "://" in host:
        return host  # a URL without a port means the scheme's port
    hostport = host.split("/", 1)[0]
    if hostport.startswith(":"):
        host = "127.0.0.1" + host
    elif ":" not in hostport.rsplit("]", 1)[-1]:
        host = host.replace(hostport, hostport + ":11434", 1)
    return "http://" + host


def default_cache_dir(env: Env) -> str:
    """$XDG_CACHE_HOME/safeclaw/llm, else ~/.cache/safeclaw/llm (nothing there is needed: a cache)."""
    home = env_text(env, "HOME")
    base = env_text(env, "XDG_CACHE_HOME") or (str(Path(home) / ".cache") if home else "")
    return str(Path(base) / "safeclaw" / "llm") if base else ""


@dataclass(frozen=True)
class LLMSettings:
    """`llm` of config.json; SAFECLAW_LLM_PROVIDER / SAFECLAW_LLM_MODEL win; hosts and keys from env."""

    provider: str = "ollama"
    model: str = DEFAULT_MODELS["ollama"]
    timeout: float = 120.0  # seconds per LLM call
    # Tokens the model reads at most (prompt and reply); 0: from the model itself (Ollama's
    # metadata, Gemini's limits, a known OpenAI model), else a safe guess. Every prompt is fitted to it.
    context_window: int = 0
    ollama_host: str = DEFAULT_OLLAMA_HOST
    ollama_api_key: str = field(default="", repr=False)  # only for an Ollama behind an auth proxy
    openai_api_key: str = field(default="", repr=False)
    openai_base_url: str = ""  # an OpenAI-compatible server; "" is api.openai.com
    gemini_api_key: str = field(default="", repr=False)  # GEMINI_API_KEY, else GOOGLE_API_KEY
    gemini_base_url: str = ""
    local_model_path: str = ""  # SAFECLAW_LOCAL_MODEL: a .gguf for the embedded model
    # SAFECLAW_LLM_CACHE_DIR: where the embedded model keeps its warm-up (default ~/.cache/safeclaw)
    local_cache_dir: str = ""
    scripted_replies: str = ""  # SAFECLAW_SCRIPTED_REPLIES: a JSON list of replies (tests, demos)

    KEYS = ("provider", "model", "timeout", "context_window")

    @classmethod
    def parse(cls, section: Section, env: Env) -> LLMSettings:
        section.refuse_unknown(cls.KEYS)
        configured = section.text("provider", "ollama")
        override = env_text(env, "SAFECLAW_LLM_PROVIDER")
        provider = override or configured
        if provider not in LLM_PROVIDERS:
            where = "SAFECLAW_LLM_PROVIDER" if override else f"{section.where}: '{section.name('provider')}'"
            raise ConfigError(f"{where} {provider!r} is not one of {', '.join(LLM_PROVIDERS)}")
        # A model configured for another provider means nothing to this one.
        model = (
            env_text(env, "SAFECLAW_LLM_MODEL")
            or (section.text("model", "") if provider == configured else "")
            or DEFAULT_MODELS[provider]
        )
        return cls(
            provider=provider,
            model=model,
            timeout=section.number("timeout", 120, 1, 3600),
            context_window=section.whole("context_window", 0, 0, 10_000_000),
            ollama_host=normalise_ollama_host(env_text(env, "OLLAMA_HOST")),
            ollama_api_key=env_text(env, "OLLAMA_API_KEY"),
            openai_api_key=env_text(env, "OPENAI_API_KEY"),
            openai_base_url=env_text(env, "OPENAI_BASE_URL"),
            gemini_api_key=env_text(env, "GEMINI_API_KEY") or env_text(env, "GOOGLE_API_KEY"),
            gemini_base_url=env_text(env, "GEMINI_BASE_URL"),
            local_model_path=env_text(env, "SAFECLAW_LOCAL_MODEL"),
            local_cache_dir=env_text(env, "SAFECLAW_LLM_CACHE_DIR") or default_cache_dir(env),
            scripted_replies=env_text(env, "SAFECLAW_SCRIPTED_REPLIES"),
        )

    @classmethod
    def from_env(cls, env: Env, **config: Any) -> LLMSettings:
        """Settings from `config` (the `llm` keys) and `env`: for tools and tests."""
        return cls.parse(Section(config, "llm settings", "llm"), env)

    def secrets(self) -> list[str]:
        return [s for s in (self.ollama_api_key, self.openai_api_key, self.gemini_api_key) if s]

    def has_cloud_key(self) -> bool:
        return bool(self.openai_api_key or self.gemini_api_key)


@dataclass(frozen=True)
class BrowserSettings:
    """`browser` of config.json; where the browser runs comes from the environment."""

    allow_private_addresses: bool = False
    page_load_timeout: float = 20.0  # seconds for one navigation
    total_timeout: float = 45.0  # seconds for a whole visit
    remote_server: str = ""  # REMOTE_BROWSER_SERVER: a Selenium Grid / chromedriver URL
    chromium: str = ""  # SAFECLAW_CHROMIUM: path of the browser binary ("" = the default path)
    chromedriver: str = ""  # SAFECLAW_CHROMEDRIVER
    proxy_listen: str = "127.0.0.1"  # BROWSER_PROXY_LISTEN: where the request guard listens
    proxy_address: str = "127.0.0.1"  # BROWSER_PROXY_ADDRESS: the guard's host as the browser sees it
    # SAFECLAW_TEST_BROWSER_HOSTS (tests only): name.test → (loopback address, port) the guard allows
    test_hosts: dict[str, tuple[str, int]] = field(default_factory=dict)

    KEYS = ("allow_private_addresses", "page_load_timeout", "total_timeout")

    @classmethod
    def parse(cls, section: Section, env: Env) -> BrowserSettings:
        section.refuse_unknown(cls.KEYS)
        remote = env_text(env, "REMOTE_BROWSER_SERVER")
        listen = env_text(env, "BROWSER_PROXY_LISTEN") or "127.0.0.1"
        address = env_text(env, "BROWSER_PROXY_ADDRESS") or listen
        remote_host = urlsplit(remote).hostname if remote.startswith(("http://", "https://")) else None
        if remote_host and remote_host not in LOOPBACK_NAMES and address in ("127.0.0.1", "0.0.0.0"):
            raise ConfigError(
                f"REMOTE_BROWSER_SERVER is at {remote_host}, which cannot reach the browser's request guard "
                "on this machine's loopback: set BROWSER_PROXY_LISTEN=0.0.0.0 and "
                "BROWSER_PROXY_ADDRESS=<the agent host name the browser resolves> (compose: agent)"
            )
        return cls(
            allow_private_addresses=section.flag("allow_private_addresses", False),
            page_load_timeout=section.number("page_load_timeout", 20, 1, 600),
            total_timeout=section.number("total_timeout", 45, 1, 3600),
            remote_server=remote,
            chromium=env_text(env, "SAFECLAW_CHROMIUM"),
            chromedriver=env_text(env, "SAFECLAW_CHROMEDRIVER"),
            proxy_listen=listen,
            proxy_address=address,
            test_hosts=browser_test_hosts(env),
        )


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
TEST_BROWSER_HOSTS = "SAFECLAW_TEST_BROWSER_HOSTS"


def browser_test_hosts(env: Env) -> dict[str, tuple[str, int]]:
    """Tests only: `attacker.test=127.0.0.1:8123,…` maps names under the reserved .test domain to
    one loopback port each, for the browser guard; refused unless SAFECLAW_TEST_HOOKS=1."""
    spec = env_text(env, TEST_BROWSER_HOSTS)
    if not spec:
        return {}
    if env_text(env, "SAFECLAW_TEST_HOOKS") != "1":
        raise ConfigError(f"{TEST_BROWSER_HOSTS} is for tests only (with SAFECLAW_TEST_HOOKS=1); remove it")
    hosts: dict[str, tuple[str, int]] = {}
    for item in spec.split(","):
        name, _, target = item.strip().partition("=")
        address, _, port = target.rpartition(":")
        if not name.endswith(".test") or address not in ("127.0.0.1", "::1") or not port.isdigit():
            raise ConfigError(f"{TEST_BROWSER_HOSTS}: {item!r} is not <name>.test=127.0.0.1:<port>")
        hosts[name.lower()] = (address, int(port))
    return hosts


@dataclass(frozen=True)
class ConsoleSettings:
    enabled: bool = True

    @classmethod
    def parse(cls, section: Section, env: Env) -> ConsoleSettings:
        section.refuse_unknown(("enabled",))
        return cls(section.flag("enabled", True))


@dataclass(frozen=True)
class TelegramSettings:
    """`channels.telegram`; the bot token and another Bot API server come from the environment."""

    enabled: bool = False
    allowed_user_ids: frozenset[int] = frozenset()
    allow_groups: bool = False  # answer allowlisted users in group chats too
    bot_token: str = field(default="", repr=False)  # TELEGRAM_BOT_TOKEN, checked when the channel starts
    api_base: str = ""  # TELEGRAM_API_BASE: another Bot API server (tests, a local server)
    where: str = "config.json"

    KEYS = ("enabled", "allowed_user_ids", "allow_groups")
    TOKEN_KEYS = ("token", "bot_token", "TELEGRAM_BOT_TOKEN")  # where a token was put by mistake

    @classmethod
    def parse(cls, section: Section, env: Env) -> TelegramSettings:
        for key in cls.TOKEN_KEYS:
            if section.has(key):
                raise ConfigError(
                    f"{section.where}: '{section.name(key)}' must not be there: the bot token belongs in "
                    "agent/.env (TELEGRAM_BOT_TOKEN) only; `python agent/start_agent.py config telegram` "
                    "removes it"
                )
        section.refuse_unknown(cls.KEYS)
        ids = section.list_of("allowed_user_ids", int, "numeric Telegram user ids, like [123456789]")
        return cls(
            enabled=section.flag("enabled", False),
            allowed_user_ids=frozenset(ids),
            allow_groups=section.flag("allow_groups", False),
            bot_token=env_text(env, "TELEGRAM_BOT_TOKEN"),
            api_base=env_text(env, "TELEGRAM_API_BASE"),
            where=section.where,
        )

    @classmethod
    def from_env(cls, env: Env) -> TelegramSettings:
        """Only what the environment gives (token, API base): for `config telegram`, which edits the rest."""
        return cls.parse(Section({}, "the environment", "channels.telegram"), env)


@dataclass(frozen=True)
class BlueskySettings:
    """`channels.bluesky`: the DIDs to watch, the hourly cap, the Jetstream URL (env wins)."""

    enabled: bool = False
    watch: frozenset[str] = frozenset()  # the owner's account DIDs; a handle can change hands
    max_per_hour: int = 20
    jetstream_url: str = DEFAULT_JETSTREAM_URL
    where: str = "config.json"

    KEYS = ("enabled", "watch", "max_per_hour", "jetstream_url")

    @classmethod
    def parse(cls, section: Section, env: Env) -> BlueskySettings:
        section.refuse_unknown(cls.KEYS)
        watch = section.list_of("watch", str, "DIDs (did:plc:…)")
        for entry in watch:
            if not is_did(entry):
                raise ConfigError(
                    f"{section.where}: '{section.name('watch')}' entry {entry[:80]!r} is not a DID. Handles "
                    "are not accepted (a handle can change hands; a DID cannot)"
                )
        url = env_text(env, JETSTREAM_URL_VARIABLE) or section.text("jetstream_url", DEFAULT_JETSTREAM_URL)
        if not url.startswith(("ws://", "wss://")):
            where = (
                JETSTREAM_URL_VARIABLE
                if env_text(env, JETSTREAM_URL_VARIABLE)
                else section.name("jetstream_url")
            )
            raise ConfigError(f"{section.where}: {where} must start with wss:// (or ws://), not {url!r}")
        return cls(
            enabled=section.flag("enabled", False),
            watch=frozenset(watch),
            max_per_hour=section.whole("max_per_hour", 20, 1, 10_000),
            jetstream_url=url or DEFAULT_JETSTREAM_URL,
            where=section.where,
        )


MIN_CYCLE_INTERVAL = 15.0  # seconds: autonomy's floor, in the settings and between two `once` runs


@dataclass(frozen=True)
class AutonomySettings:
    """`channels.autonomy`: the agent's own cycles on Moltbook (the autonomy feature reads these)."""

    enabled: bool = False
    submolts: tuple[str, ...] = ("general",)
    cycle_interval: float = 1800.0  # seconds between cycles
    max_cycles: int = 500
    quality_threshold: float = 0.7  # 0 to 1
    git_journal: bool = False
    # Every public write of autonomy waits for the owner's approval (the router holds it).
    approve_public_writes: bool = False

    KEYS = (
        "enabled", "submolts", "cycle_interval", "max_cycles", "quality_threshold", "git_journal",
        "approve_public_writes",
    )

    @classmethod
    def parse(cls, section: Section, env: Env) -> AutonomySettings:
        section.refuse_unknown(cls.KEYS)
        return cls(
            enabled=section.flag("enabled", False),
            submolts=_submolts(section),
            # Never under 15 s, whatever the file says: a faster loop only burns budget and pacing.
            cycle_interval=section.number("cycle_interval", 1800, MIN_CYCLE_INTERVAL, 7 * 24 * 3600),
            max_cycles=section.whole("max_cycles", 500, 1, 1_000_000),
            quality_threshold=section.number("quality_threshold", 0.7, 0, 1),
            git_journal=section.flag("git_journal", False),
            approve_public_writes=section.flag("approve_public_writes", False),
        )


def _submolts(section: Section) -> tuple[str, ...]:
    if not section.has("submolts"):
        return ("general",)
    names = [name.removeprefix("m/") for name in section.list_of("submolts", str, "submolt names")]
    if not 1 <= len(names) <= MAX_SUBMOLTS or not all(SUBMOLT.match(name) for name in names):
        must = f"a list of 1 to {MAX_SUBMOLTS} submolt names (letters, digits, _ and -)"
        raise section.error("submolts", must)
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class ChannelSettings:
    """`channels`: one typed section per channel (field name = the key in config.json)."""

    console: ConsoleSettings = field(default_factory=ConsoleSettings)
    telegram: TelegramSettings = field(default_factory=TelegramSettings)
    bluesky: BlueskySettings = field(default_factory=BlueskySettings)
    autonomy: AutonomySettings = field(default_factory=AutonomySettings)

    @classmethod
    def parse(cls, section: Section, env: Env) -> ChannelSettings:
        section.refuse_unknown(CHANNEL_SECTIONS)
        return cls(**{name: kind.parse(section.child(name), env) for name, kind in CHANNEL_SECTIONS.items()})

    def enabled(self) -> list[str]:
        """The channels config.json enables, in the order of the fields."""
        return [f.name for f in fields(self) if getattr(self, f.name).enabled]


# The channels config.json may hold: key -> its settings class (each has `enabled` and `parse`).
CHANNEL_SECTIONS: dict[str, Any] = {
    "console": ConsoleSettings,
    "telegram": TelegramSettings,
    "bluesky": BlueskySettings,
    "autonomy": AutonomySettings,
}
