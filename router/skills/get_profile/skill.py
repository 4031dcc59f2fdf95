"""GET_PROFILE: the account's own profile (names and bio sanitised)."""

from __future__ import annotations

from typing import Any

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


def get_profile(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    profile = on_platform(params["platform"], ctx, "profile", lambda client: client.profile())
    return {"platform": params["platform"], "profile": clean(profile, ctx)}


SKILL = Skill(
    name="GET_PROFILE",
    description=(
        "Read your own profile on a platform: handle, display name, bio, follower/following/post counts."
    ),
    schema=SCHEMA,
    side_effect=False,
    run=get_profile,
    effect=reads,
    effects=on_every_platform("read"),
    others_words=False,  # the account's own data, or counts
)
