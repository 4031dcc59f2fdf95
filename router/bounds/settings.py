"""The bounds' settings, read from the router's environment at start; anything unknown stops it.

ROUTER_QUOTAS            effects per platform per UTC day: `post=5,reply=20,like=50` (the
                         defaults) plus overrides `moltbook:post=3` or `*:delete=10`.
ROUTER_PACING            least seconds between two effects of one scope: `bsky:post=600`;
                         Moltbook's published limits are built in (see `BUILT_IN_PACING`).
ROUTER_MOLTBOOK_ACCOUNT_CREATED
                         when the Moltbook account was made (ISO 8601 with a zone); for 24 h
                         after it Moltbook's new-account limits apply.
ROUTER_DUPLICATE_THRESHOLD, ROUTER_DUPLICATE_DAYS, ROUTER_DUPLICATE_SCOPE
                         0.9, 7 and `platform` (or `all`: one history for every platform).
ROUTER_CIRCUIT_FAILURES, ROUTER_CIRCUIT_OPEN_SECONDS
                         5 failed writes in a row on a platform open its circuit for 900 s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from router.config.values import MAX_COUNT, MAX_SECONDS, no_repeats, whole_number
from router.errors import ConfigError

PLATFORMS: tuple[str, ...] = tuple(sorted(PLATFORM_CREDENTIAL_VARIABLES))  # bsky, mastodon, ...
BOUNDED_KINDS: tuple[str, ...] = ("post", "reply", "like", "delete")  # the write kinds
DEFAULT_QUOTAS: Mapping[str, int] = {"post": 5, "reply": 20, "like": 50}
NEW_ACCOUNT_SECONDS = 24 * 3600
_ITEM = re.compile(r"^\s*([^=\s]+)\s*=\s*(\S*)\s*$")

Scope = tuple[str, str]  # (platform, kind)


@dataclass(frozen=True)
class PaceRule:
    interval: int  # least seconds between two effects of this scope (0: no gap)
    daily: int | None = None  # the platform's own cap per UTC day, if it publishes one


# Moltbook's published limits: 1 post per 30 min, 1 comment per 20 s, 50 comments a day; in an
# account's first 24 h, 1 post per 2 h and 20 comments a day.
BUILT_IN_PACING: Mapping[Scope, PaceRule] = {
    ("moltbook", "post"): PaceRule(1800),
    ("moltbook", "reply"): PaceRule(20, daily=50),
}
NEW_ACCOUNT_PACING: Mapping[Scope, PaceRule] = {
    ("moltbook", "post"): PaceRule(7200),
    ("moltbook", "reply"): PaceRule(20, daily=20),
}


@dataclass(frozen=True)
class BoundsSettings:
    quotas: Mapping[Scope, int] = field(default_factory=dict)  # every platform x limited kind
    # per kind, for a platform the list above does not name (a skill added later): never unbounded
    fallback_quotas: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_QUOTAS))
    pacing: Mapping[Scope, int] = field(default_factory=dict)  # the owner's interval overrides
    moltbook_account_created: float | None = None  # unix seconds
    duplicate_threshold: float = 0.9
    duplicate_days: int = 7
    duplicate_scope: str = "platform"  # or "all"
    circuit_failures: int = 5
    circuit_open_seconds: int = 900

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BoundsSettings:
        return cls(
            quotas=parse_quotas(env.get("ROUTER_QUOTAS", "")),
            fallback_quotas=general_quotas(env.get("ROUTER_QUOTAS", "")),
            pacing=parse_pacing(env.get("ROUTER_PACING", "")),
            moltbook_account_created=parse_time(
                "ROUTER_MOLTBOOK_ACCOUNT_CREATED", env.get("ROUTER_MOLTBOOK_ACCOUNT_CREATED", "")
            ),
            duplicate_threshold=_fraction(env, "ROUTER_DUPLICATE_THRESHOLD", 0.9),
            duplicate_days=_whole(env, "ROUTER_DUPLICATE_DAYS", 7, minimum=1, maximum=365),
            duplicate_scope=_choice(env, "ROUTER_DUPLICATE_SCOPE", ("platform", "all")),
            circuit_failures=_whole(env, "ROUTER_CIRCUIT_FAILURES", 5, minimum=1, maximum=1000),
            circuit_open_seconds=_whole(
                env, "ROUTER_CIRCUIT_OPEN_SECONDS", 900, minimum=1, maximum=MAX_SECONDS
            ),
        )

    def new_account(self, platform: str, now: float) -> bool:
        """True while the platform's account is in its first 24 h (Moltbook only)."""
        created = self.moltbook_account_created
        return platform == "moltbook" and created is not None and now < created + NEW_ACCOUNT_SECONDS

    def pace_rule(self, platform: str, kind: str, now: float) -> PaceRule | None:
        """The gap and platform cap that apply now; in new-account mode never looser than Moltbook's."""
        scope = (platform, kind)
        built_in = (NEW_ACCOUNT_PACING if self.new_account(platform, now) else BUILT_IN_PACING).get(scope)
        override = self.pacing.get(scope)
        if override is None:
            return built_in
        if built_in is None:
            return PaceRule(override)
        if self.new_account(platform, now):
            override = max(override, built_in.interval)
        return PaceRule(override, built_in.daily)

    def daily_limit(self, platform: str, kind: str, now: float) -> tuple[int, str] | None:
        """The day's cap for a scope and who sets it ("quota" or the platform's own), or None."""
        quota = self.quotas.get((platform, kind))
        if platform not in PLATFORMS:
            quota = self.fallback_quotas.get(kind)
        rule = self.pace_rule(platform, kind, now)
        cap = rule.daily if rule is not None else None
        if cap is not None and (quota is None or cap < quota):
            return cap, platform
        return None if quota is None else (quota, "quota")


def parse_quotas(text: str) -> dict[Scope, int]:
    """Defaults for every platform, then `KIND=N` / `*:KIND=N`, then `PLATFORM:KIND=N` on top."""
    general: dict[str, int] = dict(DEFAULT_QUOTAS)
    specific: dict[Scope, int] = {}
    for scope, value in _items("ROUTER_QUOTAS", text):
        platform, kind = scope
        if platform == "*":
            general[kind] = value
        else:
            specific[scope] = value
    quotas = {(p, k): n for p in PLATFORMS for k, n in general.items()}
    quotas.update(specific)
    return quotas


def general_quotas(text: str) -> dict[str, int]:
    """The quotas every platform gets (defaults and `KIND=N` / `*:KIND=N`), by kind."""
    general: dict[str, int] = dict(DEFAULT_QUOTAS)
    items = _items("ROUTER_QUOTAS", text)
    general.update({kind: value for (platform, kind), value in items if platform == "*"})
    return general


def parse_pacing(text: str) -> dict[Scope, int]:
    general: dict[str, int] = {}
    specific: dict[Scope, int] = {}
    for scope, value in _items("ROUTER_PACING", text):
        if scope[0] == "*":
            general[scope[1]] = value
        else:
            specific[scope] = value
    pacing = {(p, k): n for p in PLATFORMS for k, n in general.items()}
    pacing.update(specific)
    return pacing


def _items(setting: str, text: str) -> list[tuple[Scope, int]]:
    found: list[tuple[Scope, int]] = []
    maximum = MAX_SECONDS if setting == "ROUTER_PACING" else MAX_COUNT
    for item in filter(None, (part.strip() for part in text.split(","))):
        match = _ITEM.match(item)
        if match is None:
            raise ConfigError(f"{setting}: {item!r} is not SCOPE=NUMBER (e.g. moltbook:post=3 or reply=20)")
        name, raw = match.groups()
        platform, sep, kind = name.partition(":")
        if not sep:
            platform, kind = "*", name
        if platform != "*" and platform not in PLATFORMS:
            raise ConfigError(
                f"{setting}: unknown platform {platform!r} in {item!r} "
                f"(platforms: {', '.join(PLATFORMS)}, or '*')"
            )
        if kind not in BOUNDED_KINDS:
            raise ConfigError(
                f"{setting}: unknown or unbounded effect kind {kind!r} in {item!r} "
                f"(kinds: {', '.join(BOUNDED_KINDS)})"
            )
        found.append(((platform, kind), whole_number(setting, raw, 0, maximum, item)))
    no_repeats(setting, [f"{platform}:{kind}" for (platform, kind), _ in found])
    return found


def parse_time(setting: str, raw: str) -> float | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ConfigError(f"{setting}: {raw!r} is not an ISO 8601 time (e.g. 2026-11-22T09:00:00Z)") from None
    if moment.tzinfo is None:
        raise ConfigError(f"{setting}: {raw!r} has no time zone; add Z (UTC) or an offset such as +01:00")
    return moment.timestamp()


def _whole(env: Mapping[str, str], name: str, default: int, minimum: int, maximum: int) -> int:
    raw = env.get(name, "").strip()
    return whole_number(name, raw, minimum, maximum) if raw else default


def _fraction(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 < value <= 1.0:
        raise ConfigError(f"{name}: {raw!r} is not a number above 0 and at most 1 (e.g. 0.9)")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower() or choices[0]
    if raw not in choices:
        raise ConfigError(f"{name}: {raw!r} is not one of {', '.join(choices)}")
    return raw
