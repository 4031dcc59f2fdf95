"""A public Bluesky post read for someone who needs its context: the post, the thread above it,
the post it quotes, its images' alt texts and its link card, through the AppView, logged out.

Each way a post can be unreadable is its own error kind: `not_found` (no such account or no
such post), `deleted` (the account is there, the post is not), `login_required` (the author
asked that logged-out viewers not see their posts, with the `!no-unauthenticated` label; the
router honours it as bsky.app does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atproto import Client, models

from router.errors import SkillError
from router.platforms.bsky import (
    POST_COLLECTION,
    post_view_dict,
    requires_login,
    split_post_ref,
)
from router.platforms.bsky_appview import on_appview

MAX_PARENTS = 5
MAX_IMAGES = 4


def _images(embed: Any) -> list[dict[str, str]]:
    found = list(getattr(embed, "images", None) or [])[:MAX_IMAGES]
    return [{"alt": image.alt or "", "url": image.fullsize or ""} for image in found]


def _media_of(embed: Any) -> tuple[list[dict[str, str]], dict[str, str] | None]:
    """(images with alt texts, external link card) of an embed view."""
    if embed is None:
        return [], None
    media = getattr(embed, "media", None)
    if media is not None:  # recordWithMedia: the media half
        return _media_of(media)
    external = getattr(embed, "external", None)
    if external is not None:
        card = {"url": external.uri, "title": external.title or "", "description": external.description or ""}
        return [], card
    alt = getattr(embed, "alt", None)
    if getattr(embed, "playlist", None) is not None:  # a video
        return [{"alt": alt or "", "url": ""}], None
    return _images(embed), None


def _quoted(embed: Any) -> dict[str, Any] | None:
    """The quoted post of an embed view, or a note saying why it cannot be shown."""
    record = getattr(embed, "record", None)
    if isinstance(record, models.AppBskyEmbedRecord.View):  # recordWithMedia: the record half
        record = record.record
    if isinstance(record, models.AppBskyEmbedRecord.ViewRecord):
        if requires_login(record.author):
            return {"id": record.uri, "unavailable": "its author hides posts from logged-out viewers"}
        images, card = _media_of((record.embeds or [None])[0])
        return {**post_view_dict(record), "images": images, **({"link": card} if card else {})}
    if isinstance(record, models.AppBskyEmbedRecord.ViewNotFound):
        return {"id": record.uri, "unavailable": "the quoted post was deleted"}
    if isinstance(record, models.AppBskyEmbedRecord.ViewBlocked):
        return {"id": record.uri, "unavailable": "the quoted post is blocked"}
    if isinstance(record, models.AppBskyEmbedRecord.ViewDetached):
        return {"id": record.uri, "unavailable": "the quoted post's author detached it"}
    return None  # a feed, list or starter pack: not a post


def post_detail(view: Any) -> dict[str, Any]:
    """A PostView as a dict, with images' alt texts, link card and quoted post."""
    post = post_view_dict(view)
    images, card = _media_of(view.embed)
    post["images"] = images
    if card:
        post["link"] = card
    quoted = _quoted(view.embed)
    if quoted:
        post["quoted"] = quoted
    return post


def _parents(thread: Any) -> list[dict[str, Any]]:
    """The posts above this one, root first (at most MAX_PARENTS; gaps said as such)."""
    chain: list[dict[str, Any]] = []
    parent = getattr(thread, "parent", None)
    while parent is not None and len(chain) < MAX_PARENTS:
        if isinstance(parent, models.AppBskyFeedDefs.ThreadViewPost):
            if requires_login(parent.post.author):
                chain.append(
                    {"id": parent.post.uri, "unavailable": "its author hides posts from logged-out viewers"}
                )
            else:
                chain.append(post_detail(parent.post))
            parent = parent.parent
        else:
            reason = "deleted" if isinstance(parent, models.AppBskyFeedDefs.NotFoundPost) else "blocked"
            chain.append(
                {"id": getattr(parent, "uri", ""), "unavailable": f"this post in the thread is {reason}"}
            )
            break
    return list(reversed(chain))


def _account_exists(client: Client, did: str) -> bool:
    try:
        client.app.bsky.actor.get_profile(models.AppBskyActorGetProfile.Params(actor=did))
    except Exception:
        return False
    return True


def _resolve(client: Client, ref: str) -> str:
    authority, rkey = split_post_ref(ref)
    if not authority.startswith("did:"):
        try:
            authority = client.resolve_handle(authority).did
        except Exception as exc:
            if getattr(getattr(exc, "response", None), "status_code", None) == 400:
                raise SkillError("not_found", f"there is no Bluesky account @{authority}") from None
            raise
    return f"at://{authority}/{POST_COLLECTION}/{rkey}"


def fetch_thread(env: Mapping[str, str], ref: str, timeout: float, max_replies: int = 10) -> dict[str, Any]:
    """The post at `ref` with its parents (root first), quoted post, alt texts and direct replies."""
    return on_appview(env, timeout, "post fetch", lambda client: _fetch_thread(client, ref, max_replies))


def _fetch_thread(client: Client, ref: str, max_replies: int) -> dict[str, Any]:
    uri = _resolve(client, ref)
    did = uri.split("/")[2]
    try:
        response = client.get_post_thread(uri, depth=1, parent_height=MAX_PARENTS)
    except Exception as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status != 400:
            raise
        response = None
    thread = response.thread if response is not None else None
    if not isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost):
        if isinstance(thread, models.AppBskyFeedDefs.BlockedPost):
            raise SkillError("not_found", "that post is blocked from view on Bluesky")
        if _account_exists(client, did):
            raise SkillError(
                "deleted",
                "that post is gone: its author's account exists, but the post "
                "was deleted (or the link's last part is mistyped)",
            )
        raise SkillError("not_found", "there is no Bluesky account or post at that address")
    if requires_login(thread.post.author):
        raise SkillError(
            "login_required",
            "the author of that post asks that it not be shown to "
            "logged-out viewers, and SafeClaw reads Bluesky logged out",
        )
    post = post_detail(thread.post)
    post["parents"] = _parents(thread)
    replies = [r for r in (thread.replies or []) if isinstance(r, models.AppBskyFeedDefs.ThreadViewPost)]
    post["thread_replies"] = [post_view_dict(r.post) for r in replies if not requires_login(r.post.author)][
        :max_replies
    ]
    return post
