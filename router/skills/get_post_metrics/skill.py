"""GET_POST_METRICS: likes, reposts/boosts and replies of a post, where the platform has them."""

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
)

SCHEMA = params_schema({"platform": PLATFORM_PARAM, "post_id": POST_ID_PARAM}, ["platform", "post_id"])


def get_post_metrics(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """The counts only, and the post as it was asked for: a post's URL or its author's handle come
    from whoever runs its server (a federated Mastodon status says what it likes), so no string
    the platform sent is passed on, and the result holds no one else's words (`others_words`)."""
    post_id = params["post_id"]
    metrics = on_platform(params["platform"], ctx, "metrics", lambda client: client.metrics(post_id))
    counts = {
        str(key): value for key, value in metrics.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    return {"platform": params["platform"], "post_id": post_id, **counts}


SKILL = Skill(
    name="GET_POST_METRICS",
    description="Likes, reposts/boosts and replies of a post by its id or URL.",
    schema=SCHEMA,
    side_effect=False,
    run=get_post_metrics,
    effect=lambda params: Effect(params["platform"], "read", public=True),
    effects=on_every_platform("read"),
    others_words=False,  # counts only: every string the platform sent is left out
)
