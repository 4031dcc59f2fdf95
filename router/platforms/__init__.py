"""Platform clients by key, imported lazily so an unused platform costs nothing at start-up."""

from __future__ import annotations

import importlib

from router.errors import SkillError
from router.platforms.base import PlatformClient
from router.registry import SkillContext

PLATFORM_CLASSES: dict[str, str] = {
    "bsky": "router.platforms.bsky:BlueskyClient",
    "mastodon": "router.platforms.mastodon:MastodonClient",
    "reddit": "router.platforms.reddit:RedditClient",
    "x": "router.platforms.x:XClient",
    "moltbook": "router.platforms.moltbook:MoltbookClient",
}


def platform_class(platform: str) -> type[PlatformClient]:
    target = PLATFORM_CLASSES.get(platform)
    if target is None:
        known = ", ".join(sorted(PLATFORM_CLASSES))
        raise SkillError("unknown_platform", f"unknown platform {platform!r}; known: {known}")
    module_name, class_name = target.split(":")
    cls: type[PlatformClient] = getattr(importlib.import_module(module_name), class_name)
    return cls


def client_for(platform: str, ctx: SkillContext) -> PlatformClient:
    """An authenticated-on-demand client for `platform`, or SkillError(no_credentials/unknown_platform)."""
    return platform_class(platform)(ctx.credentials, ctx.env, ctx.timeout)
