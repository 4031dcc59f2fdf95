"""LIKE_POST: like (favourite) a post."""

from __future__ import annotations

from typing import Any

from router.policy.effects import Effect
from router.registry import Skill, SkillContext
from router.skills.social_common import (
    PLATFORM_PARAM,
    POST_ID_PARAM,
    on_every_platform,
    on_platform,
    params_schema,
    record_dry_run,
)

SCHEMA = params_schema({"platform": PLATFORM_PARAM, "post_id": POST_ID_PARAM}, ["platform", "post_id"])


def like_post(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if ctx.dry_run:
        return record_dry_run("LIKE_POST", params["platform"], params, ctx)
    result = on_platform(params["platform"], ctx, "like", lambda client: client.like(params["post_id"]))
    return {"platform": params["platform"], **result}


SKILL = Skill(
    name="LIKE_POST",
    description="Like (favourite/upvote) a post by its id or URL.",
    schema=SCHEMA,
    side_effect=True,
    run=like_post,
    effect=lambda params: Effect(params["platform"], "like", target=params["post_id"]),
    effects=on_every_platform("like"),
)
