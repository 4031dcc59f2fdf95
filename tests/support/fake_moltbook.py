"""A fake Moltbook REST API (https://www.moltbook.com/api/v1) on 127.0.0.1.

Records each request; failure modes as in `tests.support.recording_server.RecordingServer`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.support.recording_server import Recorded, RecordingServer, Response, json_response


@dataclass
class MoltPost:
    id: str
    title: str
    content: str | None
    url: str | None
    submolt: str
    author: str
    upvotes: int = 0
    downvotes: int = 0
    comment_count: int = 0
    created_at: str = "2026-02-01T12:00:00.000Z"
    comments: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "content": self.content,
            "url": self.url,
            "upvotes": self.upvotes,
            "downvotes": self.downvotes,
            "comment_count": self.comment_count,
            "created_at": self.created_at,
            "author": {"id": "agent-" + self.author, "name": self.author},
            "submolt": {
                "id": "sm-" + self.submolt,
                "name": self.submolt,
                "display_name": self.submolt.title(),
            },
        }


class FakeMoltbook(RecordingServer):
    """Speaks the subset of Moltbook's REST API the client uses, under /api/v1."""

    def __init__(self, api_key: str = "moltbook_sk_fake", agent: str = "safeclaw_agent") -> None:
        super().__init__()
        self.api_key = api_key
        self.agent = agent
        self.agent_id = "agent-1"
        self.description = "a careful agent"
        self.posts: dict[str, MoltPost] = {}
        self.notifications: list[dict[str, Any]] = []

    @property
    def base(self) -> str:
        return self.url + "/api/v1"

    def add_post(self, title: str, content: str, submolt: str = "general", author: str = "other") -> MoltPost:
        post = MoltPost(
            id=str(uuid.uuid4()),
            title=title,
            content=content,
            url=None,
            submolt=submolt,
            author=author,
            upvotes=3,
            comment_count=1,
        )
        self.posts[post.id] = post
        return post

    def route(self, request: Recorded) -> Response:
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return json_response(401, {"success": False, "error": "Invalid API key", "hint": "check the key"})
        if not request.path.startswith("/api/v1/"):
            return json_response(404, {"success": False, "error": "Not found"})
        parts = request.path[len("/api/v1/") :].strip("/").split("/")
        handler = getattr(self, f"_{request.method.lower()}_{parts[0]}", None)
        if handler is None:
            return json_response(404, {"success": False, "error": "Not found"})
        result: Response = handler(request, parts[1:])
        return result

    def _get_agents(self, request: Recorded, rest: list[str]) -> Response:
        if rest != ["me"]:
            return json_response(404, {"success": False, "error": "Agent not found"})
        return json_response(
            200,
            {
                "success": True,
                "agent": {
                    "id": self.agent_id,
                    "name": self.agent,
                    "description": self.description,
                    "karma": 42,
                    "follower_count": 5,
                    "following_count": 2,
                    "is_claimed": True,
                    "created_at": "2026-01-30T09:00:00.000Z",
                },
            },
        )

    def _post_posts(self, request: Recorded, rest: list[str]) -> Response:
        body = request.json() or {}
        if not rest:
            if not body.get("submolt") or not body.get("title"):
                return json_response(400, {"success": False, "error": "submolt and title are required"})
            post = MoltPost(
                id=str(uuid.uuid4()),
                title=body["title"],
                content=body.get("content"),
                url=body.get("url"),
                submolt=body["submolt"],
                author=self.agent,
            )
            self.posts[post.id] = post
            return json_response(201, {"success": True, "post": post.to_json()})
        post_or_none = self.posts.get(rest[0])
        if post_or_none is None:
            return json_response(404, {"success": False, "error": "Post not found"})
        if rest[1:] == ["upvote"]:
            post_or_none.upvotes += 1
            return json_response(200, {"success": True, "message": "Upvoted!"})
        if rest[1:] == ["comments"]:
            comment = {
                "id": str(uuid.uuid4()),
                "content": body.get("content", ""),
                "parent_id": body.get("parent_id"),
                "author": {"name": self.agent},
                "created_at": "2026-02-01T12:05:00.000Z",
            }
            post_or_none.comments.append(comment)
            post_or_none.comment_count += 1
            return json_response(201, {"success": True, "comment": comment})
        return json_response(404, {"success": False, "error": "Not found"})

    def _sorted(self, request: Recorded) -> list[MoltPost]:
        """`sort=new` is newest first (posts in creation order otherwise, as the fake has no votes)."""
        posts = list(self.posts.values())
        return posts[::-1] if request.query.get("sort", [""])[0] == "new" else posts

    def _get_posts(self, request: Recorded, rest: list[str]) -> Response:
        if not rest:
            limit = int(request.query.get("limit", ["25"])[0])
            posts = [p.to_json() for p in self._sorted(request)][:limit]
            return json_response(200, {"success": True, "posts": posts, "count": len(posts)})
        post = self.posts.get(rest[0])
        if post is None:
            return json_response(404, {"success": False, "error": "Post not found"})
        return json_response(200, {"success": True, "post": post.to_json()})

    def _delete_posts(self, request: Recorded, rest: list[str]) -> Response:
        if not rest or self.posts.pop(rest[0], None) is None:
            return json_response(404, {"success": False, "error": "Post not found"})
        return json_response(200, {"success": True, "message": "Post deleted"})

    def _get_submolts(self, request: Recorded, rest: list[str]) -> Response:
        if len(rest) != 2 or rest[1] != "feed":
            return json_response(404, {"success": False, "error": "Not found"})
        limit = int(request.query.get("limit", ["25"])[0])
        posts = [p.to_json() for p in self._sorted(request) if p.submolt == rest[0]][:limit]
        return json_response(200, {"success": True, "data": {"posts": posts, "has_more": False}})

    def _get_notifications(self, request: Recorded, rest: list[str]) -> Response:
        limit = int(request.query.get("limit", ["25"])[0])
        return json_response(200, {"success": True, "notifications": self.notifications[:limit]})
