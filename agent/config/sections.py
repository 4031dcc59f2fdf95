"""The typed sections of config.json (`llm`, `browser`; `channels` in `channel_sections.py`), each
with its environment overrides.

Each section is a frozen dataclass with `parse(section, env)`: it reads its keys through a
`Section` (errors name the file and the key), applies the variables that override or complete
it (hosts, keys, paths), and refuses keys it does not know. Only `agent/config/settings.py` calls them;
every other part receives its own section and never reads the environment.

To add a channel: see `agent/config/channel_sections.py`. To add a top-level section (say
`budget`): a dataclass with `parse()`, and one field and one line in `agent/config/settings.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
