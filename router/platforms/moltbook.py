"""Moltbook (the social network for AI agents) over its REST API with `httpx`.

Base URL `MOLTBOOK_API_BASE` (default https://www.moltbook.com/api/v1 — with `www`: the bare
domain redirects and the redirect drops the Authorization header); every call carries
`Authorization: Bearer MOLTBOOK_API_KEY`. Redirects are never followed, so the key cannot be
carried to another host.

The API as documented by Moltbook's skill file and observed by its users (there is no formal
spec; these are the assumptions):
- `GET /agents/me` → `{"success": true, "agent": {name, id, karma, description, ...}}`
- `POST /posts` `{submolt, title, content}` or `{submolt, title, url}` → `{"post": {...}}`
- `GET /posts/<id>` → `{"post": {upvotes, downvotes, comment_count, author, ...}}`; `DELETE /posts/<id>`
  (only of the agent's own posts: the author's name is the one `GET /agents/me` gives)
- `POST /posts/<id>/upvote`; `POST /posts/<id>/comments` `{content, parent_id?}` → `{"comment"}`
- `GET /posts?sort=&limit=` and `GET /submolts/<name>/feed?sort=&limit=` → posts, under `posts`,
  `data.posts` or `data` (list shapes vary between endpoints, so all three are accepted)
- `GET /notifications?limit=` → `{"notifications": [{type, actor|author, content|message,
  post_id|data.post_id, created_at}]}`
- Errors are `{"success": false, "error": ..., "hint": ...}`; 429 carries `Retry-After`.
Authors and submolts come as objects `{id, name}`; plain strings are accepted too.
Moltbook has no reply-to-post in `POST /posts`: `reply_to` becomes a comment on that post.
"""

from __future__ import annotations

import functools
import re
import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from router.errors import SkillError
from router.platforms.base import Notification, PlatformClient, PostRef, PostRequest, is_write, refuse_cut
from router.platforms.http_errors import error_for_status
from router.platforms.titles import DEFAULT_SUBMOLT, TITLE_LIMIT, first_line

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE = "https://www.moltbook.com/api/v1"
PUBLIC_URL = "https://www.moltbook.com"
CONTENT_LIMIT = 40_000
SORTS = ("hot", "new", "top", "rising")
_POST_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_POST_URL = re.compile(r"moltbook\.com/post/([A-Za-z0-9_-]{1,64})")
_KINDS = {"comment_reply": "reply", "reply": "reply", "post_comment": "reply", "comment": "reply",
          "mention": "mention", "upvote": "like", "vote": "like", "follow": "follow",
          "new_follower": "follow"}


def post_id_of(ref: str) -> str:
    """A Moltbook post id from an id or a moltbook.com/post/<id> URL."""
    ref = ref.strip()
    found = _POST_URL.search(ref)
    if found:
        return found.group(1)
    if _POST_ID.match(ref):
        return ref
    raise SkillError("invalid_params", "a Moltbook post id is a UUID or a moltbook.com/post/<id> URL")


def _name(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name") or value.get("username") or "")
    return str(value or "")


def _clip(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[: limit - 1] + "…", True)


def post_summary(post: Mapping[str, Any]) -> dict[str, Any]:
    """One post of a feed in a small stable shape (raw text: the skill sanitises it)."""
    ident = str(post.get("id", ""))
    return {
        "id": ident,
        "title": str(post.get("title") or ""),
        "text": str(post.get("content") or ""),
        "link": post.get("url") if isinstance(post.get("url"), str) and "://" in post["url"] else None,
        "author": _name(post.get("author")),
        "submolt": _name(post.get("submolt")),
        "upvotes": int(post.get("upvotes") or 0),
        "comments": int(post.get("comment_count") or 0),
        "created_at": str(post.get("created_at") or ""),
        "url": f"{PUBLIC_URL}/post/{ident}",
    }


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The CA bundle httpx would load, loaded once per process: loading it takes a quarter of a
    second, which a new client per request would pay every time."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class MoltbookClient(PlatformClient):
    key = "moltbook"
    required = ("MOLTBOOK_API_KEY",)

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        import httpx  # a tenth of a second of imports a router pays only when it uses Moltbook

        super().__init__(credentials, env, timeout)
        self.base = (env.get("MOLTBOOK_API_BASE") or DEFAULT_BASE).rstrip("/")
        self._http: httpx.Client = httpx.Client(timeout=timeout, follow_redirects=False, verify=tls_context())
        self._own_name = ""

    def retime(self, timeout: float) -> None:
        import httpx

        super().retime(timeout)
        self._http.timeout = httpx.Timeout(timeout)

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, json: dict[str, Any] | None = None,
                 params: dict[str, Any] | None = None, doing: str = "request") -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.credentials['MOLTBOOK_API_KEY']}",
                   "Accept": "application/json", "User-Agent": "safeclaw-router/0.1"}
        import httpx

        if is_write(method, path):
            self.before_write()
        try:
            response = self._http.request(method, self.base + path, json=json, params=params, headers=headers)
        except httpx.TimeoutException:
            raise SkillError("request_failed", f"moltbook did not answer the {doing} in time") from None
        except httpx.HTTPError as exc:
            raise SkillError("request_failed", f"could not reach moltbook ({type(exc).__name__})") from None
        if response.status_code >= 300:
            raise error_for_status("moltbook", response.status_code, response.headers, doing)
        try:
            data = response.json()
        except ValueError:
            raise SkillError("internal_error", f"moltbook's answer to the {doing} is not JSON") from None
        if not isinstance(data, dict) or data.get("success") is False:
            raise SkillError("internal_error", f"moltbook did not accept the {doing}")
        return data

    @staticmethod
    def _object(data: dict[str, Any], key: str) -> dict[str, Any]:
        found = data.get(key) or data.get("data") or {}
        if isinstance(found, dict) and key in found and isinstance(found[key], dict):
            found = found[key]
        return found if isinstance(found, dict) else {}

    @staticmethod
    def _list(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
        for found in (data.get(key), data.get("data"), (data.get("data") or {}).get(key)
                      if isinstance(data.get("data"), dict) else None):
            if isinstance(found, list):
                return [item for item in found if isinstance(item, dict)]
        return []

    def auth_test(self) -> dict[str, Any]:
        agent = self._object(self._request("GET", "/agents/me", doing="auth test"), "agent")
        self._own_name = str(agent.get("name") or "")
        return {"handle": agent.get("name", ""), "id": str(agent.get("id", ""))}

    def own_name(self) -> str:
        """The key's agent name (asked once per kept client): a post's author is named by it."""
        if not self._own_name:
            self.auth_test()
        return self._own_name

    def profile(self) -> dict[str, Any]:
        agent = self._object(self._request("GET", "/agents/me", doing="profile"), "agent")
        name = str(agent.get("name", ""))
        return {
            "handle": name, "id": str(agent.get("id", "")), "description": agent.get("description") or "",
            "karma": agent.get("karma", 0), "followers": agent.get("follower_count", 0),
            "following": agent.get("following_count", 0), "claimed": agent.get("is_claimed"),
            "url": f"{PUBLIC_URL}/u/{name}",
        }

    def post(self, request: PostRequest) -> PostRef:
        if request.reply_to:
            link = f"\n\n{request.url}" if request.url else ""
            return self.comment(request.reply_to, request.text + link, whole=request.whole)
        title, title_cut = _clip((request.title or "").strip() or first_line(request.text), TITLE_LIMIT)
        submolt = (request.subreddit or DEFAULT_SUBMOLT).removeprefix("m/")
        body: dict[str, Any] = {"submolt": submolt, "title": title}
        content, content_cut = _clip(request.text, CONTENT_LIMIT)
        refuse_cut(self.key, request.whole, content_cut or (title_cut and bool(request.title)))
        if request.url:
            body["url"] = request.url
        if content.strip() and (content.strip() != title or not request.url):
            body["content"] = content
        post = self._object(self._request("POST", "/posts", json=body, doing="post"), "post")
        ident = str(post.get("id", ""))
        if not ident:
            raise SkillError("internal_error", "moltbook did not return the new post's id")
        ref = PostRef(id=ident, url=f"{PUBLIC_URL}/post/{ident}")
        if title_cut or content_cut:
            ref.extra["truncated"] = True
        return ref

    def comment(self, post_ref: str, text: str, parent_id: str | None = None, whole: bool = False) -> PostRef:
        """Comment on a post (or answer a comment on it, with `parent_id`); `whole`: as in
        `PostRequest`."""
        ident = post_id_of(post_ref)
        content, cut = _clip(text, CONTENT_LIMIT)
        refuse_cut(self.key, whole, cut)
        body: dict[str, Any] = {"content": content}
        if parent_id:
            body["parent_id"] = parent_id
        comment = self._object(self._request("POST", f"/posts/{ident}/comments", json=body, doing="comment"),
                               "comment")
        ref = PostRef(id=str(comment.get("id", "")), url=f"{PUBLIC_URL}/post/{ident}",
                      extra={"post_id": ident})
        if cut:
            ref.extra["truncated"] = True
        return ref

    def delete(self, post_id: str) -> dict[str, Any]:
        ident = post_id_of(post_id)
        post = self._object(self._request("GET", f"/posts/{ident}", doing="post lookup"), "post")
        author = _name(post.get("author"))
        if not author or author != self.own_name():
            raise self.not_own("delete")
        self._request("DELETE", f"/posts/{ident}", doing="delete")
        return {"deleted": True, "id": ident}

    def like(self, post_id: str) -> dict[str, Any]:
        ident = post_id_of(post_id)
        self._request("POST", f"/posts/{ident}/upvote", doing="upvote")
        return {"liked": True, "id": ident}

    def metrics(self, post_id: str) -> dict[str, Any]:
        ident = post_id_of(post_id)
        post = self._object(self._request("GET", f"/posts/{ident}", doing="metrics"), "post")
        upvotes, downvotes = int(post.get("upvotes") or 0), int(post.get("downvotes") or 0)
        return {"likes": upvotes, "downvotes": downvotes, "score": upvotes - downvotes,
                "replies": int(post.get("comment_count") or 0)}

    def feed(self, submolt: str | None, sort: str = "hot", limit: int = 25) -> list[dict[str, Any]]:
        """Posts of one submolt (or the global feed when `submolt` is None), newest shape first."""
        if sort not in SORTS:
            raise SkillError("invalid_params", f"sort must be one of {', '.join(SORTS)}")
        if submolt is not None and not _POST_ID.match(submolt):
            raise SkillError("invalid_params", "a submolt name is letters, digits, '_' and '-'")
        params = {"sort": sort, "limit": max(1, min(limit, 100))}
        path = f"/submolts/{submolt}/feed" if submolt else "/posts"
        data = self._request("GET", path, params=params, doing="feed")
        return [post_summary(post) for post in self._list(data, "posts")[:limit]]

    def notifications(self, limit: int) -> list[Notification]:
        data = self._request("GET", "/notifications", params={"limit": max(1, min(limit, 100))},
                             doing="notifications")
        return [self._notification(item) for item in self._list(data, "notifications")[:limit]]

    @staticmethod
    def _notification(item: dict[str, Any]) -> Notification:
        extra: dict[str, Any] = item["data"] if isinstance(item.get("data"), dict) else {}
        post_id = item.get("post_id") or extra.get("post_id")
        return Notification(
            kind=_KINDS.get(str(item.get("type", "")).lower(), "other"),
            author=_name(item.get("actor") or item.get("author") or extra.get("actor")),
            text=str(item.get("content") or item.get("message") or extra.get("content") or ""),
            post_id=str(post_id) if post_id else None,
            url=f"{PUBLIC_URL}/post/{post_id}" if post_id else None,
            created_at=str(item.get("created_at") or ""),
        )


def as_moltbook(client: PlatformClient) -> MoltbookClient:
    """The kept client of the "moltbook" platform, with its Moltbook-only calls (comment, feed)."""
    if not isinstance(client, MoltbookClient):
        raise SkillError("internal_error", "the moltbook platform has no Moltbook client")
    return client
