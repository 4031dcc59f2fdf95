"""Reads through the router's public skills, FETCH_POST and SEARCH_POSTS: the mind holds no
credentials. A router failure becomes an ExplainError whose message says what to do."""

from __future__ import annotations

from typing import Any, Protocol

from agent.explain.errors import ExplainError

CONVERSATION = "explain"
SEARCH_LIMIT = 8
_ROUTER_DOWN = {"router_unreachable", "router_not_connected", "redis_refused"}
_POST_ERRORS = {
    "not_found": "not_found",
    "deleted": "deleted",
    "login_required": "login_required",
    "invalid_params": "malformed_url",
}


class RouterPort(Protocol):
    def call(self, action: str, params: dict[str, Any], conversation: str) -> dict[str, Any]: ...


def _answer(router: RouterPort, action: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = router.call(action, params, CONVERSATION)
    status = reply.get("status")
    if status == "ok":
        result = reply.get("result")
        return result if isinstance(result, dict) else {}
    error = str(reply.get("error") or status)
    message = str(reply.get("message") or error)
    if status == "unknown" or error in _ROUTER_DOWN:
        raise ExplainError(
            "router_down",
            f"the router did not answer {action} ({message}); is it running? start the stack with ./safeclaw",
        )
    if status == "denied":
        raise ExplainError("read_failed", f"the router refused {action}: {message}")
    raise ExplainError(_POST_ERRORS.get(error, "read_failed"), message)


def fetch_post(router: RouterPort, address: str) -> dict[str, Any]:
    """FETCH_POST's result: {post, parents, replies}, post carrying quoted/images/link."""
    key = "post_id" if address.startswith("at://") else "url"
    result = _answer(router, "FETCH_POST", {"platform": "bsky", key: address})
    if not isinstance(result.get("post"), dict):
        raise ExplainError("read_failed", "the router's FETCH_POST answer holds no post")
    return result


def search_posts(router: RouterPort, query: str) -> list[dict[str, Any]]:
    result = _answer(
        router, "SEARCH_POSTS", {"platform": "bsky", "query": query[:300], "limit": SEARCH_LIMIT}
    )
    posts = result.get("posts")
    return [p for p in posts if isinstance(p, dict)] if isinstance(posts, list) else []
