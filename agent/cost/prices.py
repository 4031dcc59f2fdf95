"""USD per million tokens, per model. Local models cost nothing; the owner can override any price.

Defaults are the providers' published list prices for common models (standard tier, text). A
cloud model missing from the table is priced as the dearest model of its provider, so an
unknown model can only be over-counted, never counted free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.errors import ConfigError


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float
    source: str = "default"  # default | owner | local | assumed

    def usd(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000


MAX_PRICE = 1_000_000.0  # USD per million tokens: a dollar a token
# Providers that run on the owner's own machine (or replay a script): no per-token bill.
LOCAL_PROVIDERS = frozenset({"ollama", "local", "scripted"})

DEFAULT_PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "openai": {
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4o": (2.50, 10.00),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-5-nano": (0.05, 0.40),
        "gpt-5-mini": (0.25, 2.00),
        "gpt-5": (1.25, 10.00),
        "o4-mini": (1.10, 4.40),
        "o3-mini": (1.10, 4.40),
        "o3": (2.00, 8.00),
    },
    "gemini": {
        "gemini-2.0-flash-lite": (0.075, 0.30),
        "gemini-2.0-flash": (0.10, 0.40),
        "gemini-2.5-flash-lite": (0.10, 0.40),
        "gemini-2.5-flash": (0.30, 2.50),
        "gemini-2.5-pro": (1.25, 10.00),
    },
}


def parse_overrides(data: Any, where: str) -> dict[str, Price]:
    """`budget.prices`: {"model": {"input": USD per million, "output": USD per million}}."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: 'budget.prices' must be an object of model -> {{input, output}}")
    prices: dict[str, Price] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ConfigError(
                f'{where}: budget.prices[{model!r}] must be {{"input": X, "output": Y}} '
                "in USD per million tokens"
            )
        numbers = [entry["input"], entry["output"]]
        if any(
            isinstance(n, bool) or not isinstance(n, int | float) or not 0 <= n <= MAX_PRICE for n in numbers
        ):
            raise ConfigError(
                f"{where}: budget.prices[{model!r}] prices must be numbers from 0 to {MAX_PRICE:g}"
            )
        prices[str(model)] = Price(float(numbers[0]), float(numbers[1]), "owner")
    return prices


def _normalise(model: str) -> str:
    return model.strip().lower().removeprefix("models/")


def _longest_prefix(table: Mapping[str, Any], model: str) -> str | None:
    """A dated or suffixed name ("gpt-4o-mini-2024-07-18") takes the price of its family."""
    found = [name for name in table if model == name or model.startswith(name + "-")]
    return max(found, key=len) if found else None


def price_of(provider: str, model: str, overrides: Mapping[str, Price]) -> Price:
    """The owner's price for the model if set, else 0 for a local provider, else the table's."""
    name = _normalise(model)
    owner = {_normalise(k): v for k, v in overrides.items()}
    if name in owner:
        return owner[name]
    if provider in LOCAL_PROVIDERS:
        return Price(0.0, 0.0, "local")
    table = DEFAULT_PRICES.get(provider, {})
    match = _longest_prefix(table, name)
    if match is not None:
        return Price(*table[match], source="default")
    every = [p for prices in DEFAULT_PRICES.values() for p in prices.values()]
    dearest = max(table.values() or every, key=lambda p: p[0] + p[1])
    return Price(*dearest, source="assumed")
