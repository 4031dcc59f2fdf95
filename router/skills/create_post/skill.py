"""CREATE_POST: publish a post (or a reply, or a quote) and return its id and public URL."""

from __future__ import annotations

from typing import Any

from router.platforms.base import PostRequest
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

SCHEMA = params_schema(
    {
        "platform": PLATFORM_PARAM,
        "text": {"type": "string", "minLength": 1, "maxLength": 10000,
                 "description": "the post; cut to the platform's limit on a character boundary"},
        "url": {"type": "string", "pattern": "^https?://[^\\s]+$", "maxLength": 2000,
                "description": "a link to attach"},
        "reply_to": {**POST_ID_PARAM, "description": "id or URL of the post to reply to"},
        "quote": {**POST_ID_PARAM, "description": "id or URL of the post to quote"},
        "subreddit": {"type": "string", "pattern": "^[A-Za-z0-9_]{2,21}$", "description": "Reddit only"},
        "title": {"type": "string", "minLength": 1, "maxLength": 300, "description": "Reddit only"},
    },
    ["platform", "text"],
)


def create_post(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if ctx.dry_run:
        return record_dry_run("CREATE_POST", params["platform"], params, ctx)
    request = PostRequest(
        text=params["text"], url=params.get("url"), reply_to=params.get("reply_to"),
        quote=params.get("quote"),
        subreddit=params.get("subreddit"), title=params.get("title"), idempotency_key=ctx.command_id,
        whole=ctx.approved,
    )
    ref = on_platform(params["platform"], ctx, "post", lambda client: client.post(request))
    return {"platform": params["platform"], **ref.to_dict()}


def create_post_effect(params: dict[str, Any]) -> Effect:
    """A reply when it answers a post (a quote is a post of its own)."""
    shown_with = tuple(params[k] for k in ("title", "url") if params.get(k))
    if params.get("reply_to"):
        return Effect(params["platform"], "reply", params["text"], params["reply_to"], shown_with=shown_with)
    return Effect(params["platform"], "post", params["text"], params.get("quote"), shown_with=shown_with)


SKILL = Skill(
    name="CREATE_POST",
    description=(
        "Publish a post on a social platform (bsky, mastodon, reddit, x, moltbook). Text over the "
        "platform's limit is cut to fit (result says truncated: true). Optional: url (a link), reply_to "
        "(post id or URL to reply to), quote (post id or URL to quote), subreddit and title (Reddit). "
        "Returns the new post's id and public URL."
    ),
    schema=SCHEMA,
    side_effect=True,
    run=create_post,
    effect=create_post_effect,
    effects=on_every_platform("post", "reply"),
)
