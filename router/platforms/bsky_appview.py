"""Bluesky's public reads (search, a post's thread) through the AppView, without credentials: one
SDK client per lane thread, kept in the same registry as the platform clients
(`router.platforms.kept`), so a read reuses its connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx
from atproto import Client, models
from atproto_client.request import Request

from router.errors import SkillError
from router.platforms import REBUILD_AFTER, forget, kept
from router.platforms.bsky import DEFAULT_APPVIEW, _guard, post_view_dict, requires_login

T = TypeVar("T")


class AppView:
    """The public AppView's SDK client (no login), kept per lane thread as a platform client is."""

    key = "bsky"

    def __init__(self, base_url: str, timeout: float) -> None:
        self._request = Request(timeout=timeout)
        self.client = Client(base_url=base_url, request=self._request)

    def retime(self, timeout: float) -> None:
        self._request._client.timeout = httpx.Timeout(timeout)

    def close(self) -> None:
        self._request.close()


APPVIEW_SLOT = "bsky:appview"


def on_appview(env: Mapping[str, str], timeout: float, doing: str, read: Callable[[Client], T]) -> T:
    """One read through this thread's kept AppView client; a failure that may have broken it
    (no answer, the SDK failing) drops it."""
    base = env.get("BSKY_APPVIEW") or DEFAULT_APPVIEW
    appview = kept(APPVIEW_SLOT, base, timeout, lambda: AppView(base, timeout))
    try:
        return _guard(doing, lambda: read(appview.client))
    except SkillError as error:
        if error.kind in REBUILD_AFTER:
            forget(APPVIEW_SLOT, appview)
        raise


def search_posts(env: Mapping[str, str], query: str, limit: int, timeout: float) -> list[dict[str, Any]]:
    """Public posts matching `query`, through the AppView, without credentials."""
    params = models.AppBskyFeedSearchPosts.Params(q=query, limit=limit)
    response = on_appview(env, timeout, "search", lambda client: client.app.bsky.feed.search_posts(params))
    return [post_view_dict(view) for view in response.posts if not requires_login(view.author)]
