"""Bluesky through the `atproto` SDK: the account's PDS (BSKY_SERVICE) and the public AppView.

Post ids are AT-URIs; a `https://bsky.app/profile/<handle-or-did>/post/<rkey>` URL is accepted
wherever a post id is. A post's record key is derived from the command id, so a retried
CREATE_POST finds the record it already wrote instead of posting twice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from atproto import Client, models
from atproto_client.exceptions import BadRequestError
from atproto_client.request import Request

from router.errors import SkillError
from router.platforms.base import Notification, PlatformClient, PostRef, PostRequest, is_write, refuse_cut
from router.platforms.http_errors import error_from_exception
from router.platforms.text_limits import BLUESKY_LIMIT, bluesky_length, truncate

DEFAULT_SERVICE = "https://bsky.social"
DEFAULT_APPVIEW = "https://public.api.bsky.app"
POST_COLLECTION = "app.bsky.feed.post"
LOGGED_OUT_LABEL = "!no-unauthenticated"  # the author's wish: not shown to logged-out viewers
_WEB_POST_URL = re.compile(r"^https?://(?:www\.)?bsky\.app/profile/([^/\s]+)/post/([A-Za-z0-9._:~-]+)/?$")
_AT_URI = re.compile(r"^at://([^/\s]+)/([a-zA-Z0-9.]+)/([A-Za-z0-9._:~-]+)$")
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
# Record keys derived from command ids carry a timestamp in [2023-01-01, 2025-01-01): a TID
# in the past is valid everywhere, a far-future one would not be.
_TID_EPOCH_US = 1_672_531_200 * 1_000_000
_TID_SPAN_US = 2 * 365 * 86_400 * 1_000_000
_NOTIFICATION_KINDS = {"like": "like", "repost": "repost", "follow": "follow", "mention": "mention",
                       "reply": "reply", "quote": "quote"}

LOGIN_PROCEDURES = frozenset(
    {"/xrpc/com.atproto.server.createSession", "/xrpc/com.atproto.server.refreshSession"}
)

T = TypeVar("T")


class _WriteCheckedRequest(Request):
    """The SDK's HTTP layer: each write (an XRPC procedure but the login's) asks `before_write`
    right before it leaves, after the SDK's own login or session refresh."""

    def __init__(self, before_write: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.before_write = before_write

    def _new_instance(self) -> _WriteCheckedRequest:
        return type(self)(self.before_write, **self._client_kwargs)

    def _send_request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        if is_write(method, urlsplit(url).path, LOGIN_PROCEDURES):
            self.before_write()
        return super()._send_request(method, url, **kwargs)


def record_key_for(idempotency_key: str) -> str:
    """A TID-shaped record key (13 chars of base32-sortable) derived only from `idempotency_key`."""
    digest = hashlib.sha256(idempotency_key.encode("utf-8")).digest()
    micros = _TID_EPOCH_US + int.from_bytes(digest[:8], "big") % _TID_SPAN_US
    value = (micros << 10) | (int.from_bytes(digest[8:10], "big") & 0x3FF)
    chars = []
    for _ in range(13):
        chars.append(_TID_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def split_post_ref(ref: str) -> tuple[str, str]:
    """(handle-or-did, rkey) of an AT-URI or bsky.app post URL; invalid_params otherwise."""
    ref = ref.strip()
    web = _WEB_POST_URL.match(ref)
    if web:
        return web.group(1), web.group(2)
    at = _AT_URI.match(ref)
    if at and at.group(2) == POST_COLLECTION:
        return at.group(1), at.group(3)
    raise SkillError("invalid_params", "a Bluesky post id is an at:// URI of a post or a "
                     "https://bsky.app/profile/<handle>/post/<rkey> URL")


def web_url(author: str, uri: str) -> str:
    return f"https://bsky.app/profile/{author}/post/{uri.rsplit('/', 1)[-1]}"


def _guard(doing: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except SkillError:
        raise
    except Exception as exc:
        raise error_from_exception(exc, "bsky", doing) from None


def _resolve_uri(client: Client, ref: str) -> str:
    """The AT-URI with a DID authority for a post id or URL (a handle is resolved)."""
    authority, rkey = split_post_ref(ref)
    if not authority.startswith("did:"):
        authority = _guard("handle resolution", lambda: client.resolve_handle(authority).did)
    return f"at://{authority}/{POST_COLLECTION}/{rkey}"


def _text_of(record: Any) -> str:
    text = getattr(record, "text", None)
    if text is None and isinstance(record, Mapping):
        text = record.get("text")
    return text if isinstance(text, str) else ""


def requires_login(author: Any) -> bool:
    """True when the author labelled their account as hidden from logged-out viewers."""
    labels = getattr(author, "labels", None) or []
    return any(getattr(label, "val", None) == LOGGED_OUT_LABEL for label in labels)


def post_view_dict(view: Any) -> dict[str, Any]:
    """A PostView (or an embed's ViewRecord) of the AppView as a plain dict (raw text: the skill
    sanitises it)."""
    author = view.author
    record = getattr(view, "record", None) or getattr(view, "value", None)
    return {
        "id": view.uri,
        "url": web_url(author.handle, view.uri),
        "author": author.handle,
        "author_name": author.display_name or "",
        "text": _text_of(record),
        "created_at": getattr(record, "created_at", None) or view.indexed_at,
        "likes": view.like_count or 0,
        "reposts": view.repost_count or 0,
        "replies": view.reply_count or 0,
        "quotes": view.quote_count or 0,
    }


class BlueskyClient(PlatformClient):
    key = "bsky"
    required = ("BSKY_HANDLE", "BSKY_PASSWORD")

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        super().__init__(credentials, env, timeout)
        self._client: Client | None = None
        # The SDK's httpx client (its connections are kept); its writes ask `before_write` first.
        self._request = _WriteCheckedRequest(self.before_write, timeout=timeout)
        self._did = ""
        self._handle = ""

    def retime(self, timeout: float) -> None:
        super().retime(timeout)
        self._request._client.timeout = httpx.Timeout(timeout)

    def close(self) -> None:
        self._request.close()

    def _session(self) -> Client:
        """The logged-in SDK client (logs in on first use; the SDK refreshes its session)."""
        if self._client is None:
            service = self.env.get("BSKY_SERVICE") or DEFAULT_SERVICE
            client = Client(base_url=service, request=self._request)
            handle, password = self.credentials["BSKY_HANDLE"], self.credentials["BSKY_PASSWORD"]
            profile = _guard("login", lambda: client.login(handle, password))
            session = client._session  # the SDK keeps the DID and handle of the session here
            self._did = profile.did if profile else (session.did if session else "")
            self._handle = profile.handle if profile else (session.handle if session else handle)
            self._client = client
        return self._client

    def auth_test(self) -> dict[str, Any]:
        self._session()
        return {"platform": self.key, "handle": self._handle, "id": self._did}

    def _strong_ref(self, client: Client, uri: str) -> tuple[models.ComAtprotoRepoStrongRef.Main, Any]:
        repo, rkey = uri.split("/")[2], uri.rsplit("/", 1)[-1]
        try:
            record = _guard("post lookup", lambda: client.app.bsky.feed.post.get(repo, rkey))
        except SkillError as error:
            if isinstance(error.__context__, BadRequestError):  # XRPC RecordNotFound
                raise SkillError("not_found", f"bsky has no post {uri}") from None
            raise
        return models.ComAtprotoRepoStrongRef.Main(uri=record.uri, cid=record.cid), record.value

    def _reply_ref(self, client: Client, reply_to: str) -> models.AppBskyFeedPost.ReplyRef:
        parent, parent_record = self._strong_ref(client, _resolve_uri(client, reply_to))
        parent_reply = getattr(parent_record, "reply", None)
        root = parent_reply.root if parent_reply is not None else parent
        return models.AppBskyFeedPost.ReplyRef(root=root, parent=parent)

    def _fit_text(self, request: PostRequest) -> tuple[str, bool]:
        """The post text within 300 graphemes, with the link (if any) appended whole."""
        if not request.url or request.url in request.text:
            return truncate(request.text, BLUESKY_LIMIT, bluesky_length)
        suffix = " " + request.url
        if bluesky_length(request.url + "…") > BLUESKY_LIMIT:
            raise SkillError("invalid_params", "the link alone is longer than a Bluesky post (300)")
        body, truncated = truncate(request.text.rstrip(), BLUESKY_LIMIT, lambda t: bluesky_length(t + suffix))
        return (body + suffix if body else request.url), truncated

    def post(self, request: PostRequest) -> PostRef:
        client = self._session()
        text, truncated = self._fit_text(request)
        refuse_cut(self.key, request.whole, truncated)
        reply = self._reply_ref(client, request.reply_to) if request.reply_to else None
        embed = None
        if request.quote:
            quoted, _ = self._strong_ref(client, _resolve_uri(client, request.quote))
            embed = models.AppBskyEmbedRecord.Main(record=quoted)
        facets = _guard("facet detection", lambda: client.detect_facets(text)) or None
        record = models.AppBskyFeedPost.Record(
            created_at=client.get_current_time_iso(), text=text, reply=reply, embed=embed, facets=facets
        )
        rkey = record_key_for(request.idempotency_key) if request.idempotency_key else None
        extra: dict[str, Any] = {"truncated": True} if truncated else {}
        try:
            created = client.app.bsky.feed.post.create(self._did, record, rkey=rkey)
            uri = created.uri
        except Exception as exc:
            error = error_from_exception(exc, "bsky", "post")
            existing = self._already_posted(client, rkey) if rkey and error.kind not in (
                "auth_failed", "rate_limited", "kill_switch", "redis_unavailable") else None
            if existing is None:
                raise error from None
            uri, extra["already_posted"] = existing, True
        return PostRef(id=uri, url=web_url(self._handle, uri), extra=extra)

    def _already_posted(self, client: Client, rkey: str) -> str | None:
        """The URI of our record at `rkey` when a previous attempt of this command wrote it."""
        try:
            return str(client.app.bsky.feed.post.get(self._did, rkey).uri)
        except Exception:
            return None

    def delete(self, post_id: str) -> dict[str, Any]:
        client = self._session()
        uri = _resolve_uri(client, post_id)
        repo, rkey = uri.split("/")[2], uri.rsplit("/", 1)[-1]
        if repo != self._did:
            raise self.not_own("delete")
        _guard("delete", lambda: client.app.bsky.feed.post.delete(repo, rkey))
        return {"deleted": True, "id": uri}

    def like(self, post_id: str) -> dict[str, Any]:
        client = self._session()
        subject, _ = self._strong_ref(client, _resolve_uri(client, post_id))
        like = _guard("like", lambda: client.like(subject.uri, subject.cid))
        return {"liked": True, "id": subject.uri, "like_id": like.uri}

    def profile(self) -> dict[str, Any]:
        client = self._session()
        view = _guard("profile", lambda: client.get_profile(self._did))
        return {
            "platform": self.key, "id": view.did, "handle": view.handle,
            "display_name": view.display_name or "", "description": view.description or "",
            "followers": view.followers_count or 0, "following": view.follows_count or 0,
            "posts": view.posts_count or 0, "url": f"https://bsky.app/profile/{view.handle}",
        }

    def notifications(self, limit: int) -> list[Notification]:
        client = self._session()
        params = models.AppBskyNotificationListNotifications.Params(limit=limit)
        response = _guard("notifications", lambda: client.app.bsky.notification.list_notifications(params))
        items = []
        for item in response.notifications[:limit]:
            kind = _NOTIFICATION_KINDS.get(item.reason, "other")
            on_own_post = kind in ("like", "repost")
            post_id = item.reason_subject if on_own_post else (item.uri if kind != "follow" else None)
            post_author = self._handle if on_own_post else item.author.handle
            items.append(Notification(
                kind=kind, author=item.author.handle, text=_text_of(item.record) if not on_own_post else "",
                post_id=post_id, url=web_url(post_author, post_id) if post_id else None,
                created_at=item.indexed_at,
            ))
        return items

    def metrics(self, post_id: str) -> dict[str, Any]:
        client = self._session()
        uri = _resolve_uri(client, post_id)
        response = _guard("metrics", lambda: client.get_posts([uri]))
        if not response.posts:
            raise SkillError("not_found", "bsky has no visible post at that address")
        view = post_view_dict(response.posts[0])
        return {key: view[key] for key in ("id", "url", "likes", "reposts", "replies", "quotes")}
