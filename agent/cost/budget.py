"""The budget: `budget.daily_usd` and `budget.total_usd`, checked before every LLM call.

At 80% of either the owner is alerted once; at 100% no LLM call is made at all (the call is
refused before anything is sent, so the budget can be passed by at most the reply of the call
that crossed it). A call whose prompt alone would pass the budget is refused too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.cost.ledger import CostEntry, CostLedger, utc_day
from agent.cost.prices import Price, parse_overrides
from agent.cost.shares import (
    OUTSIDE_POOL,
    SHARE_KEYS,
    OutsideSpend,
    ShareExhausted,
    ShareSettings,
    current_payer,
    share_refusal,
)
from agent.errors import BudgetExhausted, ConfigError, CostsUnrecorded, StateFileError
from agent.llm.usage import Usage
from agent.workspace.folder import read_json, write_json_atomic

log = logging.getLogger("safeclaw.agent.cost")
ALERT_FRACTION = 0.8
MAX_REFUSED_SHOWN = 1000  # refused shares kept per day for status (a flood of new authors is bounded)
DEFAULT_DAILY_USD = 2.0
DEFAULT_TOTAL_USD = 50.0
MAX_USD = 1_000_000.0

# (kind, text) -> None: tells the owner (see agent.owner.alerts.OwnerNotifier).
Notify = Callable[[str, str], None]


@dataclass(frozen=True)
class BudgetSettings:
    daily_usd: float = DEFAULT_DAILY_USD
    total_usd: float = DEFAULT_TOTAL_USD
    prices: dict[str, Price] = field(default_factory=dict)  # the owner's overrides, by model
    shares: ShareSettings = field(default_factory=ShareSettings)  # what outside words may spend

    @classmethod
    def from_config(cls, data: Any, where: Path | str) -> BudgetSettings:
        """The `budget` section of config.json; absent means the defaults, anything wrong is a ConfigError."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(
                f'{where}: \'budget\' must be an object like {{"daily_usd": 2, "total_usd": 50}}'
            )
        unknown = set(data) - {"daily_usd", "total_usd", "prices", *SHARE_KEYS}
        if unknown:
            raise ConfigError(
                f"{where}: unknown budget setting(s) {', '.join(sorted(unknown))}; "
                f"known: daily_usd, total_usd, prices, {', '.join(SHARE_KEYS)}"
            )
        return cls(
            daily_usd=_usd(data, "daily_usd", DEFAULT_DAILY_USD, where),
            total_usd=_usd(data, "total_usd", DEFAULT_TOTAL_USD, where),
            prices=parse_overrides(data.get("prices"), str(where)),
            shares=ShareSettings.from_budget(data, where),
        )


def _usd(data: dict[str, Any], key: str, default: float, where: Path | str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_USD:
        raise ConfigError(
            f"{where}: budget.{key} must be a number of US dollars from 0 to {MAX_USD:g}, not {value!r}"
        )
    return float(value)


@dataclass(frozen=True)
class BudgetStatus:
    today_usd: float
    total_usd: float
    daily_budget_usd: float
    total_budget_usd: float
    calls_today: int
    tokens_today: int
    outside: OutsideSpend = field(default_factory=OutsideSpend)
    shares: ShareSettings = field(default_factory=ShareSettings)
    refused: tuple[str, ...] = ()  # the shares this process refused a call of today

    def outside_spent(self) -> list[str]:
        """The outside shares of today that are spent (reached, or refused a call: what is left
        is less than a call), authors and channels; the owner's turns go on."""
        limit = self.shares.author * self.daily_budget_usd
        spent = [a for a, usd in sorted(self.outside.by_author.items()) if usd >= limit]
        channel = self.shares.outside if self.shares.channel is None else self.shares.channel
        spent += [f"the {c} channel" for c, usd in sorted(self.outside.by_channel.items())
                  if usd >= channel * self.daily_budget_usd]
        if self.outside.usd >= self.shares.outside * self.daily_budget_usd:
            spent.insert(0, OUTSIDE_POOL)
        spent += [name for name in self.refused if name not in spent]
        return sorted(set(spent), key=lambda name: (name != OUTSIDE_POOL, spent.index(name)))

    def exhausted(self) -> str | None:
        """'total' or 'daily' when that budget is spent, else None."""
        if self.total_usd >= self.total_budget_usd:
            return "total"
        if self.today_usd >= self.daily_budget_usd:
            return "daily"
        return None

    def summary(self) -> dict[str, Any]:
        """The fields the dashboard reads from `Keys.agent_cost`."""
        return {
            "today_usd": round(self.today_usd, 6),
            "total_usd": round(self.total_usd, 6),
            "daily_budget_usd": self.daily_budget_usd,
            "total_budget_usd": self.total_budget_usd,
            "calls_today": self.calls_today,
            "tokens_today": self.tokens_today,
            "outside_today_usd": round(self.outside.usd, 6),
            "outside_budget_usd": round(self.shares.outside * self.daily_budget_usd, 6),
            "outside_spent": [name[:100] for name in self.outside_spent()[:20]],
        }

    def line(self) -> str:
        state = {"total": "SPENT (total): no LLM call is made", "daily": "SPENT (today): no LLM call is made"}
        return (
            f"LLM cost today ${self.today_usd:.4f} of ${self.daily_budget_usd:.2f}, total "
            f"${self.total_usd:.4f} of ${self.total_budget_usd:.2f}, {self.calls_today} call(s), "
            f"{self.tokens_today} token(s) today" + (f" — {state[w]}" if (w := self.exhausted()) else "")
            + self._outside_line()
        )

    def _outside_line(self) -> str:
        if not self.outside.usd:
            return ""
        line = (f"; outside words ${self.outside.usd:.4f} of "
                f"${self.shares.outside * self.daily_budget_usd:.2f}")
        spent = self.outside_spent()
        if spent:
            shown = ", ".join(spent[:5]) + (f" and {len(spent) - 5} more" if len(spent) > 5 else "")
            line += f" (share spent, refused until tomorrow: {shown})"
        return line


class BudgetGuard:
    """Counts every call into the ledger, refuses calls past the budget, alerts the owner."""

    def __init__(
        self,
        settings: BudgetSettings,
        ledger: CostLedger,
        alerts_path: Path,
        notify: Notify | None = None,
        publish: Callable[[BudgetStatus], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.alerts_path = alerts_path
        self.notify = notify
        self.publish = publish
        self.clock = clock
        self._refused: dict[str, dict[str, None]] = {}  # day -> the shares refused a call (ordered)

    def status(self) -> BudgetStatus:
        today = self.ledger.today()
        return BudgetStatus(
            today.usd,
            self.ledger.total(),
            self.settings.daily_usd,
            self.settings.total_usd,
            today.calls,
            today.tokens,
            today.outside,
            self.settings.shares,
            tuple(self._refused.get(utc_day(self.clock()), {})),
        )

    def refusal(self, price: Price, projected_input_tokens: int) -> tuple[str, float, float] | None:
        """(which budget, spent, limit) when a prompt of that size may not be sent, else None."""
        status = self.status()
        projected = price.usd(projected_input_tokens, 0)
        for which, spent, limit in (
            ("total", status.total_usd, status.total_budget_usd),
            ("daily", status.today_usd, status.daily_budget_usd),
        ):
            if spent >= limit or spent + projected > limit:
                return which, spent, limit
        return None

    def check(self, price: Price, projected_input_tokens: int) -> None:
        """Raise BudgetExhausted when the budget is spent, or the prompt alone would overspend it,
        or an earlier call's cost could not be written down (CostsUnrecorded)."""
        if not self.ledger.flush():
            raise CostsUnrecorded(str(self.ledger.path), self.ledger.write_error)
        refused = self.refusal(price, projected_input_tokens)
        if refused is not None:
            which, spent, limit = refused
            self._alert_once(
                which,
                "spent",
                f"LLM budget: the {which} budget is spent "
                f"(${spent:.4f} of ${limit:.2f}); autonomy pauses and chat makes no LLM call.",
            )
            raise BudgetExhausted(which, spent, limit)
        self._check_share(price.usd(projected_input_tokens, 0))

    def _check_share(self, projected: float) -> None:
        """Refuse an outside payer's call past its share of the day (the owner's are not affected)."""
        payer = current_payer()
        status = self.status()
        shares, daily = self.settings.shares, status.daily_budget_usd
        refused = share_refusal(shares, daily, status.outside, payer, projected)
        if refused is None:
            return
        what, spent, limit = refused
        error = ShareExhausted(payer, what, spent, limit)
        log.warning("LLM %s", error)
        day = utc_day(self.clock())
        self._refused = {day: self._refused.get(day, {})}
        if what not in self._refused[day] and len(self._refused[day]) < MAX_REFUSED_SHOWN:
            self._refused[day][what] = None
            if self.publish is not None:
                self.publish(self.status())
        if what not in payer.charged:  # one alert per shared pool a day; an author's is in the log and status
            self._alert_once(
                "daily", f"share:{what}", f"LLM budget: the share of today for {what} is spent "
                f"(${spent:.4f} of ${limit:.2f}); its turns are refused, yours go on.", limit,
            )
        raise error

    def record(self, provider: str, model: str, price: Price, usage: Usage, label: str = "") -> BudgetStatus:
        usd = price.usd(usage.input_tokens, usage.output_tokens)
        payer = current_payer()
        self.ledger.record(
            CostEntry(
                self.clock(),
                provider,
                model,
                usage.input_tokens,
                usage.output_tokens,
                usd,
                price.source,
                usage.estimated,
                label,
                payer.author,
                payer.channel if payer.outside else "",
                payer.outside,
                payer.authors if payer.outside else (),
            )
        )
        status = self.status()
        for which, spent, limit in (
            ("daily", status.today_usd, status.daily_budget_usd),
            ("total", status.total_usd, status.total_budget_usd),
        ):
            if limit > 0 and spent >= ALERT_FRACTION * limit:
                self._alert_once(
                    which,
                    "80",
                    f"LLM budget: {spent / limit:.0%} of the {which} budget is spent "
                    f"(${spent:.4f} of ${limit:.2f}).",
                )
        if self.publish is not None:
            self.publish(status)
        return status

    def _alert_once(self, which: str, level: str, text: str, limit: float | None = None) -> None:
        """One alert per budget, level and limit (a raised budget alerts afresh); per day for the
        daily budget."""
        if limit is None:
            limit = self.settings.daily_usd if which == "daily" else self.settings.total_usd
        key = f"{which}:{level}:{limit:g}" + (f":{utc_day(self.clock())}" if which == "daily" else "")
        try:
            sent = read_json(self.alerts_path, {})
        except StateFileError as exc:
            log.warning("%s; alerting again", exc)
            sent = {}
        if not isinstance(sent, dict):
            sent = {}
        if key in sent:
            return
        sent[key] = self.clock()
        write_json_atomic(self.alerts_path, sent)
        log.warning(text)
        if self.notify is not None:
            self.notify("budget", text)
