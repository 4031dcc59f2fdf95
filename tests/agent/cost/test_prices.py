import pytest

from agent.cost.prices import Price, parse_overrides, price_of
from agent.errors import ConfigError


def test_local_providers_cost_nothing():
    for provider in ("ollama", "local", "scripted"):
        assert price_of(provider, "llama3.1:8b", {}).usd(10**6, 10**6) == 0


def test_known_models_and_their_dated_versions_take_the_table_price():
    assert price_of("openai", "gpt-4o-mini", {}) == Price(0.15, 0.60)
    assert price_of("openai", "gpt-4o-mini-2024-07-18", {}) == Price(0.15, 0.60)
    assert price_of("openai", "gpt-4o-2024-08-06", {}) == Price(2.50, 10.00)
    assert price_of("gemini", "models/gemini-2.5-flash", {}) == Price(0.30, 2.50)


def test_an_unknown_cloud_model_is_priced_as_the_dearest_never_free():
    price = price_of("openai", "some-new-model", {})
    assert price.source == "assumed"
    assert price.usd(10**6, 10**6) >= max(
        price_of("openai", m, {}).usd(10**6, 10**6) for m in ("gpt-4o", "gpt-5", "o3")
    )


def test_the_owner_overrides_any_price_local_ones_included():
    overrides = parse_overrides(
        {"gpt-4o-mini": {"input": 1, "output": 2}, "llama3.1:8b": {"input": 0.5, "output": 0.5}},
        "config.json",
    )
    assert price_of("openai", "gpt-4o-mini", overrides) == Price(1.0, 2.0, "owner")
    assert price_of("ollama", "llama3.1:8b", overrides).usd(2_000_000, 0) == 1.0


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"m": 1},
        {"m": {"input": 1}},
        {"m": {"input": -1, "output": 1}},
        {"m": {"input": "1", "output": 1}},
        {"m": {"input": True, "output": 1}},
    ],
)
def test_a_bad_price_table_is_a_config_error_naming_the_file(bad):
    with pytest.raises(ConfigError, match=r"config\.json"):
        parse_overrides(bad, "config.json")
