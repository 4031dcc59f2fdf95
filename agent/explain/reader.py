"""Reads through the router's public skills, FETCH_POST and SEARCH_POSTS: the mind holds no
credentials. A router failure becomes an ExplainError whose message says what to do, and
whatever the router answers is reshaped here into plain posts (strings, lists of dicts), so a
reply of the wrong shape is a clear error or a post left out, never a crash further on."""

from __future__ import annotations

from typing import Any, Protocol

from agent.explain.errors import ExplainError

CONVERSATION = "explain"
SEARCH_LIMIT = 8
MAX_FIELD_CHARS = 10_000
MAX_IMAGES = 4
_ROUTER_DOWN = {"router_unreachable", "router_not_connected", "redis_refused"}
_POST_ERRORS = {
    "not_found": "not_found",
    "deleted": "deleted",
    "login_required": "login_required",
    "invalid_params": "malformed_url",
}


# What each read is, in the words an owner reads (the message reaches them as it is).
_READS = {"FETCH_POST": "read the post from Bluesky", "SEARCH_POSTS": "search Bluesky"}


class RouterPort(Protocol):
    def call(self, action: str, params: dict[str, Any], conversation: str) -> dict[str, Any]: ...


def _text(value: Any) -> str:
    return str(value)[:MAX_FIELD_CHARS] if isinstance(value, str | int | float) else ""


def clean_post(raw: Any) -> dict[str, Any] | None:
    """A router post as {id, url, author, text, images, link?, quoted?, unavailable?}; None if not a post."""
    if not isinstance(raw, dict):
        return None
    post: dict[str, Any] = {key: _text(raw.get(key)) for key in ("id", "url", "author", "text")}
    if raw.get("unavailable"):
        post["unavailable"] = _text(raw.get("unavailable")) or "unavailable"
    images = raw.get("images")
    images = images if isinstance(images, list) else []
    post["images"] = [{"alt": _text(i.get("alt"))} for i in images if isinstance(i, dict)][:MAX_IMAGES]
    link = raw.get("link")
    if isinstance(link, dict) and _text(link.get("url")):
        post["link"] = {"url": _text(link.get("url")), "title": _text(link.get("title"))}
    quoted = clean_post(raw.get("quoted"))
    if quoted is not None:
        post["quoted"] = quoted
    return post


def _posts(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else []
    return [post for post in (clean_post(item) for item in items) if post is not None]


def _answer(router: RouterPort, command: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = router.call(command, params, CONVERSATION)
    action = _READS.get(command, command)
    if not isinstance(reply, dict):
        raise ExplainError("read_failed", f"the router's answer when asked to {action} is not a reply; "
                                          "try again")
    status = reply.get("status")
    if status == "ok":
        result = reply.get("result")
        return result if isinstance(result, dict) else {}
    error = _text(reply.get("error") or status) or "no reason given"
    message = _text(reply.get("message")) or error
    if status == "unknown":
        raise ExplainError(
            "router_timeout",
            f"the router did not answer in time when asked to {action} ({message[:200]}); it may be busy or "
            "stuck: try again, and check it with ./safeclaw status",
        )
    if error in _ROUTER_DOWN:
        raise ExplainError(
            "router_down",
            f"the router did not answer when asked to {action} ({message[:200]}); is it running? "
            "start the stack with ./safeclaw",
        )
    if status == "denied":
        raise ExplainError("read_failed", f"the router refused to {action}: {message[:300]}")
    if status != "error":
        raise ExplainError("read_failed", f"the router's answer when asked to {action} has no known "
                                          "status; try again")
    if error in _POST_ERRORS:
        raise ExplainError(_POST_ERRORS[error], message[:300])
    raise ExplainError("read_failed", f"the router could not {action} ({message[:300]}); try again later")


def fetch_post(router: RouterPort, address: str) -> dict[str, Any]:
    """FETCH_POST's result, reshaped: {post, parents, replies}, post carrying quoted/images/link."""
    key = "post_id" if address.startswith("at://") else "url"
    result = _answer(router, "FETCH_POST", {"platform": "bsky", key: address})
    post = clean_post(result.get("post"))
    if post is None or not post["id"]:
        raise ExplainError("read_failed", "the router's FETCH_POST answer holds no post; try again")
    return {"post": post, "parents": _posts(result.get("parents")), "replies": _posts(result.get("replies"))}


def search_posts(router: RouterPort, query: str) -> list[dict[str, Any]]:
    result = _answer(
        router, "SEARCH_POSTS", {"platform": "bsky", "query": query[:300], "limit": SEARCH_LIMIT}
    )
    return _posts(result.get("posts"))[:SEARCH_LIMIT]
