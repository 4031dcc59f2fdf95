"""Platform clients by key, imported lazily so an unused platform costs nothing at start-up.

A client whose class says it is `reusable` is kept by the thread that made it (a router's lane
thread) for that thread's next commands on its platform, with the same credentials and settings:
its instance facts (a Mastodon instance's length limit) and its open connection are not fetched
and opened again per command. Each thread keeps its own, so no client is shared by two commands
at once, and `router.queue.hangup` can hang up a kept connection at a command's deadline.
"""

from __future__ import annotations

import importlib
import threading

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


_kept = threading.local()


def client_for(platform: str, ctx: SkillContext) -> PlatformClient:
    """An authenticated-on-demand client for `platform`, or SkillError(no_credentials/unknown_platform)."""
    cls = platform_class(platform)
    if not cls.reusable:
        return cls(ctx.credentials, ctx.env, ctx.timeout)
    kept: dict[str, tuple[object, PlatformClient]] = _kept.__dict__.setdefault("clients", {})
    same = (tuple(sorted(ctx.credentials.items())), tuple(sorted(ctx.env.items())))
    found = kept.get(platform)
    if found is not None and found[0] == same:
        found[1].retime(ctx.timeout)
        return found[1]
    client = cls(ctx.credentials, ctx.env, ctx.timeout)
    kept[platform] = (same, client)
    return client
