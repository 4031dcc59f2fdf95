"""DELETE_POST: delete one of the account's own posts."""

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


def delete_post(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if ctx.dry_run:
        return record_dry_run("DELETE_POST", params["platform"], params, ctx)
    result = on_platform(params["platform"], ctx, "delete", lambda client: client.delete(params["post_id"]))
    return {"platform": params["platform"], **result}


SKILL = Skill(
    name="DELETE_POST",
    description="Delete one of your own posts by its id or URL.",
    schema=SCHEMA,
    side_effect=True,
    run=delete_post,
    effect=lambda params: Effect(params["platform"], "delete", target=params["post_id"]),
    effects=on_every_platform("delete"),
)
