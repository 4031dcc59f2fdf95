"""Effects: what a command will do in the world, stated by its skill before it runs.

Policy (kill switch, approvals, rate limits, quotas) decides on an `Effect`, never on an action
name: `CREATE_POST {platform: moltbook, reply_to: X}` and `MOLTBOOK_COMMENT` are both the effect
`moltbook:reply`, so a rule about one is a rule about the other. A policy setting may name an
action (it stands for every effect that action can have) or an effect scope:
`moltbook:reply`, `x:*`, `*:post`, or a bare kind such as `post`. Anything else stops the router.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from router.errors import ConfigError

KINDS: tuple[str, ...] = ("post", "reply", "like", "delete", "read")
WRITE_KINDS: frozenset[str] = frozenset({"post", "reply", "like", "delete"})
LOCAL_PLATFORM = "router"  # effects on what the router itself owns (its notebook, its liveness)


@dataclass(frozen=True, order=True)
class Scope:
    """A (platform, kind) pair: the unit policy settings are written in."""

    platform: str
    kind: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.kind}"


@dataclass(frozen=True)
class Effect:
    """What one command will do: on which platform, of which kind, with what text, to which post."""

    platform: str
    kind: str
    text: str | None = None  # the words that will be published (post, reply), for content checks
    target: str | None = None  # the post replied to, liked or deleted
    # A read of what anyone may read (public posts); any other read is of the owner's own account
    # (notifications, direct messages, profile), which a stranger's turn never gets.
    public: bool = False
    # The other words readers see beside the text (a title, a link): content checks read them too.
    shown_with: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown effect kind {self.kind!r}; kinds: {', '.join(KINDS)}")

    @property
    def all_text(self) -> str:
        """Every published word, title and link included: what the duplicate guard compares."""
        return "\n".join(t for t in (*self.shown_with, self.text) if t)

    @property
    def writes(self) -> bool:
        return self.kind in WRITE_KINDS

    @property
    def scope(self) -> Scope:
        return Scope(self.platform, self.kind)


def scopes(platforms: Iterable[str], kinds: Iterable[str]) -> frozenset[Scope]:
    """Every (platform, kind) pair of the two lists: what a skill declares it can do."""
    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown effect kind {unknown[0]!r}; kinds: {', '.join(KINDS)}")
    return frozenset(Scope(p, k) for p in platforms for k in kinds)


class HasEffects(Protocol):
    @property
    def effects(self) -> frozenset[Scope]: ...


class EffectCatalogue:
    """Translates policy setting items into scopes, from the registry's own declarations."""

    def __init__(self, skills: Mapping[str, HasEffects]) -> None:
        self.actions = {name: skill.effects for name, skill in skills.items()}
        self.all = frozenset().union(*self.actions.values()) if self.actions else frozenset()
        self.platforms = frozenset(scope.platform for scope in self.all)

    def resolve(self, setting: str, item: str) -> frozenset[Scope]:
        """The scopes one item of a setting stands for; ConfigError naming it when unknown."""
        item = item.strip()
        if item in self.actions:
            return self.actions[item]
        platform, sep, kind = item.partition(":")
        if not sep:
            platform, kind = "*", item
        platform_ok = platform == "*" or platform in self.platforms
        kind_ok = kind == "*" or kind in KINDS
        if item and platform_ok and kind_ok:
            return frozenset(s for s in self.all if platform in ("*", s.platform) and kind in ("*", s.kind))
        raise ConfigError(
            f"{setting}: unknown action or effect {item!r} (actions: {', '.join(sorted(self.actions))}; "
            f"effects: PLATFORM:KIND with platforms {', '.join(sorted(self.platforms))} and kinds "
            f"{', '.join(KINDS)}, '*' for any)"
        )

    def resolve_all(self, setting: str, items: Iterable[str]) -> frozenset[Scope]:
        found: frozenset[Scope] = frozenset()
        for item in items:
            found |= self.resolve(setting, item)
        return found
