"""A fake Mastodon instance on 127.0.0.1 speaking the REST endpoints `Mastodon.py` calls.

Statuses are rendered to HTML the way Mastodon does (`<p>`, `<br>`, linked URLs); the status
length is checked like the server checks it (graphemes, every URL 23, limit from
`max_characters`) and answered 422 when over; `Idempotency-Key` returns the status already
made for that key; every request needs `Authorization: Bearer <token>`. Failure modes as in
`tests.support.fake_bsky.RecordingHTTPServer`; "auth" answers 401 echoing the submitted token.
"""

from __future__ import annotations

import html
import itertools
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

import regex

from tests.support.fake_bsky import RecordingHTTPServer
from tests.support.recording_server import Recorded, Response, json_response

_URL = re.compile(r"https?://\S+")
_STATUS_PATH = re.compile(r"^/api/v1/statuses/(\d+)(/favourite)?$")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def server_length(text: str) -> int:
    return len(regex.findall(r"\X", _URL.sub("x" * 23, text)))


def to_html(text: str) -> str:
    paragraphs = []
    for block in text.split("\n\n"):
        escaped = html.escape(block)
        linked = _URL.sub(
            lambda m: f'<a href="{m.group(0)}" rel="nofollow noopener" target="_blank">{m.group(0)}</a>',
            escaped,
        )
        paragraphs.append("<p>" + linked.replace("\n", "<br />") + "</p>")
    return "".join(paragraphs)


class FakeMastodon(RecordingHTTPServer):
    def __init__(self, token: str = "mastodon-token-value", max_characters: int = 500) -> None:
        super().__init__()
        self.token = token
        self.max_characters = max_characters
        self.statuses: dict[str, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.idempotency: dict[str, str] = {}  # Idempotency-Key → status id
        self._ids = itertools.count(110_000_000_000_000_001)
        self.me = self.account("safeclaw", "SafeClaw", "<p>A careful agent.</p>")

    @property
    def domain(self) -> str:
        return self.url.split("//", 1)[1]

    def account(self, username: str, display_name: str = "", note: str = "") -> dict[str, Any]:
        return {
            "id": str(100000 + sum(username.encode()) * 7),
            "username": username,
            "acct": username,
            "display_name": display_name,
            "note": note,
            "locked": False,
            "bot": False,
            "created_at": "2024-01-01T00:00:00.000Z",
            "url": f"https://social.test/@{username}",
            "followers_count": 12,
            "following_count": 3,
            "statuses_count": len(self.statuses) if hasattr(self, "statuses") else 0,
            "emojis": [],
            "fields": [],
            "avatar": "",
            "header": "",
        }

    def add_status(
        self,
        text: str,
        author: dict[str, Any] | None = None,
        in_reply_to_id: str | None = None,
        raw_html: str | None = None,
    ) -> dict[str, Any]:
        status_id = str(next(self._ids))
        author = author or self.me
        status = {
            "id": status_id,
            "uri": f"{self.url}/users/{author['username']}/statuses/{status_id}",
            "url": f"{self.url}/@{author['username']}/{status_id}",
            "created_at": _now(),
            "account": author,
            "content": raw_html if raw_html is not None else to_html(text),
            "text": text,
            "visibility": "public",
            "sensitive": False,
            "spoiler_text": "",
            "media_attachments": [],
            "mentions": [],
            "tags": [],
            "emojis": [],
            "reblogs_count": 1,
            "favourites_count": 0,
            "replies_count": 0,
            "in_reply_to_id": in_reply_to_id,
            "in_reply_to_account_id": None,
            "reblog": None,
            "language": "en",
            "favourited": False,
            "edited_at": None,
        }
        self.statuses[status_id] = status
        if in_reply_to_id in self.statuses:
            self.statuses[in_reply_to_id]["replies_count"] += 1
        return status

    def add_notification(
        self, kind: str, author: dict[str, Any], status: dict[str, Any] | None = None
    ) -> None:
        self.notifications.insert(
            0,
            {
                "id": str(next(self._ids)),
                "type": kind,
                "created_at": _now(),
                "account": author,
                "status": status,
                "group_key": f"ungrouped-{kind}",
            },
        )

    def posts(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/api/v1/statuses"]

    def auth_failure(self, request: Recorded) -> Response:
        submitted = request.headers.get("authorization", "").removeprefix("Bearer ")
        return json_response(401, {"error": f"The access token is invalid ({submitted})"})

    def route(self, request: Recorded) -> Response:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return self.auth_failure(request)
        path = request.path.rstrip("/")
        if path in ("/api/v1/instance", "/api/v2/instance"):
            return json_response(200, self.instance_info())
        if path == "/api/v1/accounts/verify_credentials":
            return json_response(
                200,
                {
                    **self.me,
                    "statuses_count": len(self.statuses),
                    "source": {"note": "A careful agent.", "privacy": "public"},
                },
            )
        if path == "/api/v1/notifications":
            limit = int(request.query.get("limit", ["40"])[-1])
            types = set(request.query.get("types[]", [])) or None
            return json_response(
                200, [n for n in self.notifications if types is None or n["type"] in types][:limit]
            )
        if path == "/api/v1/statuses" and request.method == "POST":
            return self.create_status(request)
        match = _STATUS_PATH.match(path)
        if match is None or match.group(1) not in self.statuses:
            return json_response(404, {"error": "Record not found"})
        status = self.statuses[match.group(1)]
        if match.group(2) and request.method == "POST":
            status["favourites_count"] += 1
            status["favourited"] = True
        elif request.method == "DELETE":
            del self.statuses[match.group(1)]
        return json_response(200, status)

    def instance_info(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "title": "Fake Mastodon",
            "version": "4.3.0",
            "source_url": "",
            "description": "",
            "languages": ["en"],
            "api_versions": {"mastodon": 2},
            "configuration": {
                "statuses": {
                    "max_characters": self.max_characters,
                    "max_media_attachments": 4,
                    "characters_reserved_per_url": 23,
                },
                "urls": {"streaming": "wss://social.test"},
            },
        }

    def create_status(self, request: Recorded) -> Response:
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        key = request.headers.get("idempotency-key")
        if key and key in self.idempotency and self.idempotency[key] in self.statuses:
            return json_response(200, self.statuses[self.idempotency[key]])
        text = form.get("status", "")
        if not text:
            return json_response(422, {"error": "Validation failed: Text can't be blank"})
        if server_length(text) > self.max_characters:
            return json_response(
                422, {"error": f"Validation failed: Text character limit of {self.max_characters} exceeded"}
            )
        reply_to = form.get("in_reply_to_id")
        if reply_to and reply_to not in self.statuses:
            return json_response(404, {"error": "Record not found"})
        status = self.add_status(text, in_reply_to_id=reply_to)
        if key:
            self.idempotency[key] = status["id"]
        return json_response(200, status)
