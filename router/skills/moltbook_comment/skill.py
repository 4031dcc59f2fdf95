"""MOLTBOOK_COMMENT: comment on a Moltbook post (side effect; dry_run records it in the outbox)."""

from __future__ import annotations

from typing import Any

from router.platforms.base import PlatformClient, PostRef
from router.platforms.moltbook import as_moltbook
from router.policy.effects import Effect, scopes
from router.registry import Skill, SkillContext
from router.skills.social_common import on_platform, params_schema, record_dry_run

SCHEMA = params_schema(
    {
        "post_id": {"type": "string", "minLength": 1, "maxLength": 500,
                    "description": "the post's id or its https://www.moltbook.com/post/<id> URL"},
        "text": {"type": "string", "minLength": 1, "maxLength": 10000, "description": "the comment"},
    },
    ["post_id", "text"],
)


def moltbook_comment(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if ctx.dry_run:
        return record_dry_run("MOLTBOOK_COMMENT", "moltbook", params, ctx)
    def comment(client: PlatformClient) -> PostRef:
        return as_moltbook(client).comment(params["post_id"], params["text"], whole=ctx.approved)

    ref = on_platform("moltbook", ctx, "comment", comment)
    return {"platform": "moltbook", **ref.to_dict()}


SKILL = Skill(
    name="MOLTBOOK_COMMENT",
    description=(
        "Comment on a Moltbook post: {\"post_id\": \"<id or https://www.moltbook.com/post/<id>>\", \"text\": "
        "\"...\"}. Returns the comment id and the post URL."
    ),
    schema=SCHEMA,
    side_effect=True,
    run=moltbook_comment,
    effect=lambda params: Effect("moltbook", "reply", params["text"], params["post_id"]),
    effects=scopes(["moltbook"], ["reply"]),
)
