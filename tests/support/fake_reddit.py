"""A fake Reddit on 127.0.0.1 for praw: the password-grant token endpoint (`REDDIT_URL`) and the
OAuth API (`REDDIT_OAUTH_URL`) on one server, answering in Reddit's own JSON shapes.

Failure modes (see `RecordingServer`) apply to API calls; `fail_mode = "auth"` also fails the
token request, with a 401 body that echoes the client secret and password it was sent.
"""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass, field
from typing import Any

from tests.support.recording_server import Recorded, RecordingServer, Response, json_response

CREATED = 1767268800.0  # 2026-01-01T12:00:00Z


@dataclass
class Thing:
    kind: str  # t1 comment, t3 submission
    id: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def fullname(self) -> str:
        return f"{self.kind}_{self.id}"

    def listing_child(self) -> dict[str, Any]:
        return {"kind": self.kind, "data": {"id": self.id, "name": self.fullname, **self.data}}


def listing(children: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "Listing", "data": {"after": None, "before": None, "dist": len(children),
                                        "children": children}}


class FakeReddit(RecordingServer):
    def __init__(self, client_id: str = "cid", secret: str = "csecret", username: str = "safeclaw_bot",
                 password: str = "hunter2") -> None:
        super().__init__()
        self.client_id, self.secret, self.username, self.password = client_id, secret, username, password
        self.token = "fake-access-token-123"
        self.things: dict[str, Thing] = {}
        self.inbox: list[Thing] = []
        self.votes: list[dict[str, str]] = []
        self.submit_errors: list[list[str]] = []  # [type, message, field] reddit answers a submit with
        self._ids = (f"fk{n:04d}" for n in itertools.count(1))

    def add_submission(self, subreddit: str = "test", title: str = "a post", **data: Any) -> Thing:
        ident = next(self._ids)
        thing = Thing("t3", ident, {"title": title, "subreddit": subreddit, "author": "someone",
                                    "score": 12, "upvote_ratio": 0.93, "num_comments": 4,
                                    "created_utc": CREATED,
                                    "permalink": f"/r/{subreddit}/comments/{ident}/x/",
                                    **data})
        self.things[thing.fullname] = thing
        return thing

    def add_inbox_comment(self, author: str, body: str, subject: str = "comment reply") -> Thing:
        ident = next(self._ids)
        thing = Thing("t1", ident, {
            "author": author, "body": body, "subject": subject, "was_comment": True, "new": True,
            "context": f"/r/test/comments/abc123/x/{ident}/?context=3", "parent_id": "t3_abc123",
            "link_title": "a post", "subreddit": "test", "created_utc": CREATED,
            "type": subject.replace(" ", "_"),
            "dest": self.username, "first_message": None, "first_message_name": None, "replies": "",
        })
        self.inbox.append(thing)
        return thing

    def echo(self, request: Recorded) -> str:
        sent = request.body.decode(errors="replace")
        return f"invalid grant for {sent} {request.headers.get('authorization')}"

    def respond(self, request: Recorded) -> Response:
        if request.path == "/api/v1/access_token":
            if self.fail_mode == "auth":
                echo = self.echo(request)
                return json_response(401, {"message": "Unauthorized", "error": 401, "echo": echo})
            return self._token(request)
        return super().respond(request)

    def _token(self, request: Recorded) -> Response:
        expected = base64.b64encode(f"{self.client_id}:{self.secret}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return json_response(401, {"message": "Unauthorized", "error": 401})
        form = request.form()
        if form.get("grant_type") != "password" or (form.get("username"), form.get("password")) != (
            self.username, self.password
        ):
            return json_response(200, {"error": "invalid_grant"})  # Reddit answers a bad password with 200
        return json_response(200, {"access_token": self.token, "token_type": "bearer", "expires_in": 86400,
                                   "scope": "*"})

    def route(self, request: Recorded) -> Response:
        if request.headers.get("authorization") != f"bearer {self.token}":
            return json_response(401, {"message": "Unauthorized", "error": 401})
        handler = {
            ("GET", "/api/v1/me"): self._me,
            ("POST", "/api/submit/"): self._submit,
            ("POST", "/api/comment/"): self._comment,
            ("POST", "/api/del/"): self._delete,
            ("POST", "/api/vote/"): self._vote,
            ("GET", "/message/inbox/"): self._inbox,
            ("GET", "/api/info/"): self._info,
        }.get((request.method, request.path))
        if handler is None:
            return json_response(404, {"message": "Not Found", "error": 404})
        return handler(request)

    def _me(self, request: Recorded) -> Response:
        return json_response(200, {"name": self.username, "id": "u1abc", "link_karma": 10,
                                   "comment_karma": 25, "created_utc": CREATED, "is_suspended": False,
                                   "has_verified_email": True})

    def _submit(self, request: Recorded) -> Response:
        form = request.form()
        if form.get("api_type") != "json" or form.get("kind") not in ("self", "link"):
            return json_response(400, {"message": "Bad Request", "error": 400})
        if len(form.get("title", "")) > 300 or len(form.get("text", "")) > 40_000:
            return json_response(200, {"json": {"errors": [["TOO_LONG", "this is too long", "title"]]}})
        if self.submit_errors:
            return json_response(200, {"json": {"errors": self.submit_errors}})
        thing = self.add_submission(form["sr"], form["title"], selftext=form.get("text", ""),
                                    url=form.get("url"), author=self.username, score=1, num_comments=0)
        return json_response(200, {"json": {"errors": [], "data": {
            "url": f"https://www.reddit.com{thing.data['permalink']}", "drafts_count": 0,
            "id": thing.id, "name": thing.fullname}}})

    def _comment(self, request: Recorded) -> Response:
        form = request.form()
        parent = form.get("thing_id", "")
        if len(form.get("text", "")) > 10_000:
            return json_response(200, {"json": {"errors": [["TOO_LONG", "this is too long", "text"]]}})
        link_id = parent if parent.startswith("t3_") else "t3_abc123"
        ident = next(self._ids)
        thing = Thing("t1", ident, {"body": form.get("text", ""), "author": self.username,
                                    "parent_id": parent, "link_id": link_id, "score": 1,
                                    "created_utc": CREATED, "subreddit": "test",
                                    "permalink": f"/r/test/comments/{link_id[3:]}/x/{ident}/"})
        self.things[thing.fullname] = thing
        return json_response(200, {"json": {"errors": [], "data": {"things": [thing.listing_child()]}}})

    def _delete(self, request: Recorded) -> Response:
        self.things.pop(request.form().get("id", ""), None)
        return json_response(200, {})

    def _vote(self, request: Recorded) -> Response:
        self.votes.append(request.form())
        return json_response(200, {})

    def _inbox(self, request: Recorded) -> Response:
        limit = int(request.query.get("limit", ["25"])[0])
        return json_response(200, listing([t.listing_child() for t in self.inbox[:limit]]))

    def _info(self, request: Recorded) -> Response:
        names = ",".join(request.query.get("id", [])).split(",")
        found = [self.things[n].listing_child() for n in names if n in self.things]
        return json_response(200, listing(found))
