"""Whose words spend the LLM budget: the owner's, or an outside author's, and by which channel.

The loop code (never the model) names the payer of every call from the turn's origin: a turn the
owner wrote is the owner's; a stranger's mention or forward is that author's, on its channel;
an autonomy cycle pays from the `autonomy` channel and from the share of every outside author
whose new items it shows (each feed post's and notification's author, named by the cycle's code
from what the router read, never from the items' text): a call whose prompt holds several
authors' words may have been caused by any of them, so each one's share is charged the whole
call, as a value derived from several sources carries every source's label. Outside payers
together may spend at most `budget.outside_share` of the daily budget (default 25%), each channel at most
`budget.channel_share` (default the same), and one author at most `budget.author_share` (default
5%): the rest of the day is the owner's, and no one else can spend it. A call with no payer named
is the owner's (the explainer, the command line, evals: paths only the owner starts). An autonomy
cycle shows no item of an author whose share is spent (`agent.autonomy.cycle`), so one author's
posts cannot keep the others' from being answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import BudgetExhausted, ConfigError, LLMError
from protocol.origin import AUTONOMY, OWNER, Origin

DEFAULT_OUTSIDE_SHARE = 0.25
DEFAULT_AUTHOR_SHARE = 0.05
SHARE_KEYS = ("outside_share", "author_share", "channel_share")
MAX_KEY_CHARS = 200
MAX_AUTHORS = 64  # authors one call is charged to (a cycle's message shows at most ~45 items)


@dataclass(frozen=True)
class Payer:
    """Who a call is made for: `author` "" is the owner; `channel` is the path (mention, forward,
    autonomy, console…)."""

    author: str = ""
    channel: str = ""
    outside: bool = False
    # The other outside authors whose words the call's prompt shows (an autonomy cycle's new
    # items): each one's share is charged the whole call too.
    authors: tuple[str, ...] = ()

    @property
    def charged(self) -> tuple[str, ...]:
        """Every author whose share pays for the call, each once."""
        return tuple(dict.fromkeys(a for a in (self.author, *self.authors) if a))[:MAX_AUTHORS]

    def describe(self) -> str:
        if not self.outside:
            return "the owner"
        if self.author:
            return f"{self.author} ({self.channel})"
        if self.authors:
            shown = ", ".join(self.authors[:3]) + (" and others" if len(self.authors) > 3 else "")
            return f"the {self.channel} channel (words of {shown})"
        return f"the {self.channel} channel"


OUTSIDE_POOL = "all words from outside"
OWNER_PAYER = Payer()
AUTONOMY_PAYER = Payer(channel="autonomy", outside=True)
_current: ContextVar[Payer | None] = ContextVar("safeclaw_cost_payer", default=None)


@contextlib.contextmanager
def cost_payer(payer: Payer) -> Iterator[None]:
    token = _current.set(payer)
    try:
        yield
    finally:
        _current.reset(token)


def current_payer() -> Payer:
    return _current.get() or OWNER_PAYER


def payer_of(origin: Origin, authors: Iterable[str] = ()) -> Payer:
    """The payer of a turn from its origin (set by the loop code). `authors`: the outside authors
    whose words the turn's prompt shows, as the channel's code named them (autonomy's items)."""
    if origin.kind == OWNER:
        return Payer(channel=origin.via)
    named = tuple(dict.fromkeys(a[:MAX_KEY_CHARS] for a in authors if a))[:MAX_AUTHORS]
    if origin.kind == AUTONOMY:
        return Payer(channel=AUTONOMY_PAYER.channel, outside=True, authors=named) if named else AUTONOMY_PAYER
    author = (origin.author or "someone else")[:MAX_KEY_CHARS]
    return Payer(author=author, channel=origin.via, outside=True)


@dataclass(frozen=True)
class ShareSettings:
    outside: float = DEFAULT_OUTSIDE_SHARE
    author: float = DEFAULT_AUTHOR_SHARE
    channel: float | None = None  # None: the same as `outside`

    @classmethod
    def from_budget(cls, data: dict[str, Any], where: Path | str) -> ShareSettings:
        def fraction(key: str, default: float | None) -> float | None:
            value = data.get(key, default)
            if value is None and default is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ConfigError(
                    f"{where}: budget.{key} must be a part of the daily budget from 0 to 1 (0.25 is "
                    f"25%), not {value!r}"
                )
            return float(value)

        return cls(
            fraction("outside_share", DEFAULT_OUTSIDE_SHARE) or 0.0,
            fraction("author_share", DEFAULT_AUTHOR_SHARE) or 0.0,
            fraction("channel_share", None),
        )


@dataclass
class OutsideSpend:
    """What outside payers spent in one day: in all, by channel, by author."""

    usd: float = 0.0
    by_channel: dict[str, float] = field(default_factory=dict)
    by_author: dict[str, float] = field(default_factory=dict)

    def add(self, channel: str, author: str, usd: float, authors: Iterable[str] = ()) -> None:
        """One call: counted once in all and for its channel, in full for each author charged."""
        self.usd += usd
        self.by_channel[channel] = self.by_channel.get(channel, 0.0) + usd
        for name in dict.fromkeys(a for a in (author, *authors) if a):
            self.by_author[name] = self.by_author.get(name, 0.0) + usd

    def copy(self) -> OutsideSpend:
        return OutsideSpend(self.usd, dict(self.by_channel), dict(self.by_author))


class ShareExhausted(BudgetExhausted):
    """An outside payer's share of the day is spent: its call is refused, the owner's go on."""

    def __init__(self, payer: Payer, what: str, spent: float, limit: float) -> None:
        self.which = "share"
        self.payer = payer
        self.what = what
        self.spent = spent
        self.limit = limit
        message = (
            f"the share of today's LLM budget for {what} is spent (${spent:.4f} of ${limit:.2f}); "
            f"a turn by {payer.describe()} makes no LLM call"
        )
        self.reply = (
            f"I made no LLM call for this: {message}. My owner's own messages go on; this share "
            "starts again tomorrow (00:00 UTC)."
        )
        LLMError.__init__(
            self, "budget", message, "raise budget.outside_share / budget.author_share in agent/config.json"
        )


def share_refusal(
    settings: ShareSettings, daily_usd: float, spend: OutsideSpend, payer: Payer, projected: float
) -> tuple[str, float, float] | None:
    """(what, spent, limit) when an outside payer's call of `projected` dollars may not be sent."""
    if not payer.outside:
        return None
    channel_share = settings.outside if settings.channel is None else settings.channel
    limits = [(OUTSIDE_POOL, spend.usd, settings.outside),
              (f"the {payer.channel} channel", spend.by_channel.get(payer.channel, 0.0), channel_share)]
    limits += [(author, spend.by_author.get(author, 0.0), settings.author) for author in payer.charged]
    for what, spent, fraction in limits:
        limit = fraction * daily_usd
        if spent >= limit or spent + projected > limit:
            return what, spent, limit
    return None
