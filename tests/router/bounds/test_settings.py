"""The bounds' settings: defaults, overrides, and a one-line refusal naming anything unknown."""

from __future__ import annotations

import pytest

from router.bounds.settings import BoundsSettings, PaceRule
from router.errors import ConfigError
from tests.router.bounds.bounds_helpers import NOON, settings


def test_default_quotas_cover_every_platform():
    quotas = settings().quotas
    for platform in ("bsky", "mastodon", "moltbook", "reddit", "x"):
        assert quotas[(platform, "post")] == 5
        assert quotas[(platform, "reply")] == 20
        assert quotas[(platform, "like")] == 50
        assert (platform, "delete") not in quotas


def test_quota_overrides_specific_beats_general_in_any_order():
    quotas = settings(ROUTER_QUOTAS="moltbook:post=3, *:delete=10,reply=7,moltbook:reply=2,post=9").quotas
    assert quotas[("moltbook", "post")] == 3
    assert quotas[("bsky", "post")] == 9
    assert quotas[("x", "delete")] == 10
    assert quotas[("bsky", "reply")] == 7
    assert quotas[("moltbook", "reply")] == 2
    assert quotas[("reddit", "like")] == 50


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("mastadon:post=3", "'mastadon'"),
        ("post=five", "'five'"),
        ("post=-1", "'-1'"),
        ("post=1.5", "'1.5'"),
        ("post=３", "'３'"),
        ("read=3", "'read'"),
        ("moltbook:comment=3", "'comment'"),
        ("post", "'post'"),
        ("=3", "'=3'"),
        ("moltbook:=3", "''"),
        ("post=3=4", "'3=4'"),
        ("router:post=1", "'router'"),
    ],
)
def test_an_unknown_quota_item_stops_with_one_line_naming_it(value, named):
    with pytest.raises(ConfigError) as caught:
        settings(ROUTER_QUOTAS=value)
    message = str(caught.value)
    assert message.startswith("ROUTER_QUOTAS: ") and "\n" not in message
    assert named in message


@pytest.mark.parametrize("value", ["bsky:post=1m", "moltbook:posts=5", "*:read=1", "twitter:post=5"])
def test_an_unknown_pacing_item_stops(value):
    with pytest.raises(ConfigError, match="^ROUTER_PACING: "):
        settings(ROUTER_PACING=value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROUTER_MOLTBOOK_ACCOUNT_CREATED", "yesterday"),
        ("ROUTER_MOLTBOOK_ACCOUNT_CREATED", "2026-11-22T09:00:00"),
        ("ROUTER_DUPLICATE_THRESHOLD", "0"),
        ("ROUTER_DUPLICATE_THRESHOLD", "1.5"),
        ("ROUTER_DUPLICATE_THRESHOLD", "nan"),
        ("ROUTER_DUPLICATE_THRESHOLD", "90%"),
        ("ROUTER_DUPLICATE_DAYS", "0"),
        ("ROUTER_DUPLICATE_SCOPE", "global"),
        ("ROUTER_CIRCUIT_FAILURES", "0"),
        ("ROUTER_CIRCUIT_OPEN_SECONDS", "15m"),
    ],
)
def test_a_bad_value_stops_naming_the_setting(name, value):
    with pytest.raises(ConfigError, match=f"^{name}: "):
        settings(**{name: value})


def test_moltbook_published_limits_are_built_in():
    bounds = settings()
    assert bounds.pace_rule("moltbook", "post", NOON) == PaceRule(1800)
    assert bounds.pace_rule("moltbook", "reply", NOON) == PaceRule(20, daily=50)
    assert bounds.pace_rule("bsky", "post", NOON) is None
    assert bounds.daily_limit("moltbook", "reply", NOON) == (20, "quota")
    raised = settings(ROUTER_QUOTAS="reply=100")
    assert raised.daily_limit("moltbook", "reply", NOON) == (50, "moltbook")


def test_new_account_mode_lasts_24_hours_from_the_account_creation():
    bounds = settings(ROUTER_MOLTBOOK_ACCOUNT_CREATED="2026-11-28T06:00:00Z")
    assert bounds.moltbook_account_created == NOON - 6 * 3600
    assert bounds.new_account("moltbook", NOON) and not bounds.new_account("bsky", NOON)
    assert bounds.pace_rule("moltbook", "post", NOON) == PaceRule(7200)
    assert bounds.daily_limit("moltbook", "reply", NOON) == (20, "quota")
    assert settings(
        ROUTER_MOLTBOOK_ACCOUNT_CREATED="2026-11-28T06:00:00Z", ROUTER_QUOTAS="reply=40"
    ).daily_limit("moltbook", "reply", NOON) == (20, "moltbook")
    after = NOON + 18 * 3600
    assert not bounds.new_account("moltbook", after)
    assert bounds.pace_rule("moltbook", "post", after) == PaceRule(1800)


def test_owner_pacing_overrides_but_never_loosens_new_account_limits():
    bounds = settings(
        ROUTER_PACING="bsky:post=600,moltbook:post=60,*:like=5",
        ROUTER_MOLTBOOK_ACCOUNT_CREATED="2026-11-28T11:00:00+00:00",
    )
    assert bounds.pace_rule("bsky", "post", NOON) == PaceRule(600)
    assert bounds.pace_rule("x", "like", NOON) == PaceRule(5)
    assert bounds.pace_rule("moltbook", "post", NOON) == PaceRule(7200)
    assert bounds.pace_rule("moltbook", "post", NOON + 86400) == PaceRule(60)


def test_other_settings_defaults_and_values():
    assert BoundsSettings.from_env({}) == BoundsSettings(quotas=settings().quotas)
    custom = settings(
        ROUTER_DUPLICATE_THRESHOLD="0.8",
        ROUTER_DUPLICATE_DAYS="3",
        ROUTER_DUPLICATE_SCOPE="ALL",
        ROUTER_CIRCUIT_FAILURES="2",
        ROUTER_CIRCUIT_OPEN_SECONDS="60",
    )
    assert (custom.duplicate_threshold, custom.duplicate_days, custom.duplicate_scope) == (0.8, 3, "all")
    assert (custom.circuit_failures, custom.circuit_open_seconds) == (2, 60)
