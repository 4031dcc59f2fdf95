"""The channels' sections of config.json (`channels.console`, `.telegram`, `.bluesky`, `.autonomy`).

Each is a frozen dataclass with `enabled` and `parse(section, env)`, read as the other sections
are (`agent/config/sections.py`). To add a channel: its dataclass here, one line in
`CHANNEL_SECTIONS` and a field of `ChannelSettings`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from agent.channels.jetstream import DEFAULT_JETSTREAM_URL, JETSTREAM_URL_VARIABLE, is_did
from agent.config.reader import Env, Section, env_text
from agent.errors import ConfigError

SUBMOLT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_SUBMOLTS = 10


@dataclass(frozen=True)
class ConsoleSettings:
    enabled: bool = True
    terminal: str = ""  # TERM: a "dumb" one (or none) understands no escape sequence

    @classmethod
    def parse(cls, section: Section, env: Env) -> ConsoleSettings:
        section.refuse_unknown(("enabled",))
        return cls(section.flag("enabled", True), env.get("TERM", ""))


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
                    "agent/.env (TELEGRAM_BOT_TOKEN) only; `./safeclaw agent config telegram` "
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
