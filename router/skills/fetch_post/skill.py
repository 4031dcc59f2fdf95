"""FETCH_POST: one public Bluesky post with what it needs to be understood, through the AppView:
the thread above it, the post it quotes, its images' alt texts, its link card and its direct
replies. Errors name why a post cannot be read: not_found, deleted, login_required."""

from __future__ import annotations

from typing import Any

from router.errors import SkillError
from router.policy.effects import Effect, scopes
from router.registry import Skill, SkillContext
from router.skills.social_common import POST_ID_PARAM, clean, clean_all, params_schema, platform_call

SCHEMA = {
    **params_schema(
        {
            "platform": {"type": "string", "enum": ["bsky"], "default": "bsky"},
            "url": {"type": "string", "pattern": "^https?://", "maxLength": 500,
                    "description": "https://bsky.app/profile/<handle-or-did>/post/<rkey>"},
            "post_id": {**POST_ID_PARAM, "description": "the post's at:// URI"},
        },
        [],
    ),
    "minProperties": 1,
}


def fetch_post(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    from router.platforms.bsky_thread import fetch_thread  # atproto: 0.4 s of imports, paid on first use

    ref = params.get("url") or params.get("post_id")
    if not ref:
        raise SkillError("invalid_params", "FETCH_POST needs a url or a post_id")
    post = platform_call("bsky", "post fetch", lambda: fetch_thread(ctx.env, ref, ctx.timeout))
    replies = clean_all(post.pop("thread_replies", []), ctx)
    parents = clean_all(post.pop("parents", []), ctx)
    return {"platform": "bsky", "post": clean(post, ctx), "parents": parents, "replies": replies}


SKILL = Skill(
    name="FETCH_POST",
    description=(
        "Read one public Bluesky post with its parent thread, quoted post, image alt texts and direct "
        "replies, by url (https://bsky.app/profile/<handle-or-did>/post/<rkey>) or post_id (at:// URI)."
    ),
    schema=SCHEMA,
    side_effect=False,
    run=fetch_post,
    effect=lambda _params: Effect("bsky", "read", public=True),
    effects=scopes(["bsky"], ["read"]),
)
