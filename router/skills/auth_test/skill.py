"""AUTH_TEST: log in with the platform's credentials and say who we are."""

from __future__ import annotations

from typing import Any

from router.platforms import drop
from router.registry import Skill, SkillContext
from router.skills.social_common import (
    PLATFORM_PARAM,
    clean,
    on_every_platform,
    on_platform,
    params_schema,
    reads,
)

SCHEMA = params_schema({"platform": PLATFORM_PARAM}, ["platform"])


def auth_test(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    # A kept client's session may outlive its credentials (a revoked password, a new token):
    # the test logs in afresh, and the fresh client is kept in its place.
    drop(params["platform"])
    who = on_platform(params["platform"], ctx, "login", lambda client: client.auth_test())
    return {"platform": params["platform"], "ok": True, "account": clean(who, ctx)}


SKILL = Skill(
    name="AUTH_TEST",
    description="Check that a platform's credentials work; returns your handle and account id.",
    schema=SCHEMA,
    side_effect=False,
    run=auth_test,
    effect=reads,
    effects=on_every_platform("read"),
    others_words=False,  # the account's own data, or counts
)
