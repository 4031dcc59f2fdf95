"""A fake Bluesky PDS + AppView on 127.0.0.1 speaking the XRPC endpoints the `atproto` SDK calls.

Faithful where the SDK and our tests look: JWT-shaped session tokens with `exp`, did:plc DIDs,
CIDv1 (dag-cbor, sha-256) strings, AT-URIs, ISO datetimes; createRecord validates a post the way
the PDS does (TID record key, 300 graphemes, facet byte ranges inside the UTF-8 text, strong
refs in reply/embed) and refuses a record key that is taken. Every request is recorded.

Failure modes (`fail_mode`, optionally limited to `fail_paths`): "auth" (401 whose body echoes
the submitted password), "rate" (429 with retry-after and ratelimit-* headers), "error" (500),
"slow" (answers after `delay` seconds).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import time
from datetime import UTC, datetime
from typing import Any

import regex

from tests.support.recording_server import Recorded, RecordingServer, Response, json_response

TID_RE = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")


class RecordingHTTPServer(RecordingServer):
    """The shared recording server with Bluesky/Mastodon-shaped failures, limited to `fail_paths`."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_paths: set[str] | None = None  # None: every path fails

    def auth_failure(self, request: Recorded) -> Response:
        return json_response(401, {"error": "Unauthorized"})

    def failure(self, request: Recorded) -> Response | None:
        if self.fail_mode is None or (self.fail_paths is not None and request.path not in self.fail_paths):
            return None
        if self.fail_mode == "auth":
            return self.auth_failure(request)
        if self.fail_mode == "rate":
            reset = str(int(time.time()) + 30)
            return json_response(
                429,
                {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
                {
                    "Retry-After": self.retry_after,
                    "RateLimit-Limit": "3000",
                    "RateLimit-Remaining": "0",
                    "RateLimit-Reset": reset,
                    "X-RateLimit-Limit": "300",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": datetime.fromtimestamp(int(reset), UTC)
                    .isoformat()
                    .replace("+00:00", "Z"),
                },
            )
        if self.fail_mode == "error":
            return json_response(500, {"error": "InternalServerError", "message": "Internal Server Error"})
        if self.fail_mode == "slow":
            self._release.wait(self.delay)
        return None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def fake_jwt(payload: dict[str, Any]) -> str:
    header = {"typ": "at+jwt", "alg": "ES256K"}
    signature = hashlib.sha256(json.dumps(payload).encode()).digest() * 2
    return ".".join(
        [_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode()), _b64url(signature)]
    )


def fake_cid(content: Any) -> str:
    """A CIDv1 string (dag-cbor codec, sha2-256 multihash) of `content`, base32 multibase."""
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).digest()
    return "b" + base64.b32encode(bytes([0x01, 0x71, 0x12, 0x20]) + digest).decode().lower().rstrip("=")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _did_for(handle: str) -> str:
    return "did:plc:" + base64.b32encode(hashlib.sha256(handle.encode()).digest()).decode().lower()[:24]


class FakeBluesky(RecordingHTTPServer):
    """PDS and AppView in one: the tests point BSKY_SERVICE and BSKY_APPVIEW at it."""

    def __init__(self, handle: str = "safeclaw.test", password: str = "app-pass-word") -> None:
        super().__init__()
        self.handle, self.password = handle, password
        self.did = self.add_account(handle, "SafeClaw", "A careful agent.")
        self.login_paths = frozenset({"/xrpc/com.atproto.server.createSession",
                                      "/xrpc/com.atproto.server.refreshSession"})
        self.access_jwt = fake_jwt(
            {
                "scope": "com.atproto.appPass",
                "sub": self.did,
                "aud": "did:web:pds.test",
                "iat": int(time.time()),
                "exp": int(time.time()) + 7200,
            }
        )
        self.refresh_jwt = fake_jwt(
            {
                "scope": "com.atproto.refresh",
                "sub": self.did,
                "jti": "r1",
                "iat": int(time.time()),
                "exp": int(time.time()) + 86400 * 60,
            }
        )
        self.records: dict[str, dict[str, Any]] = {}  # AT-URI → {"cid", "value", "indexedAt"}
        self.notifications: list[dict[str, Any]] = []
        self._tid = itertools.count(1)

    # -- state helpers for tests -------------------------------------------------------------
    def add_account(self, handle: str, display_name: str = "", description: str = "") -> str:
        if not hasattr(self, "accounts"):
            self.accounts: dict[str, dict[str, str]] = {}
            self.account_labels: dict[str, list[dict[str, str]]] = {}
        did = _did_for(handle)
        self.accounts[did] = {"handle": handle, "displayName": display_name, "description": description}
        self.account_labels.setdefault(did, [])
        return did

    def hide_from_logged_out(self, did: str) -> None:
        """The author's `!no-unauthenticated` self-label, as the AppView shows it on their profile."""
        self.account_labels[did].append(
            {
                "src": did,
                "uri": f"at://{did}/app.bsky.actor.profile/self",
                "val": "!no-unauthenticated",
                "cts": "2024-01-01T00:00:00.000Z",
            }
        )

    def clear(self) -> None:
        """Forget every post, notification and account but the agent's own (a fresh AppView)."""
        self.records.clear()
        self.notifications.clear()
        self.accounts = {self.did: self.accounts[self.did]}
        self.account_labels = {self.did: []}

    def next_tid(self) -> str:
        return "3l" + "".join("234567abcdefghijklmnopqrstuvwxyz"[int(d)] for d in f"{next(self._tid):011d}")

    def handle_of(self, did: str) -> str:
        return self.accounts[did]["handle"]

    def add_post(
        self,
        did: str,
        text: str,
        reply: dict[str, Any] | None = None,
        embed: dict[str, Any] | None = None,
        created_at: str | None = None,
    ) -> str:
        """Store a post record; `embed` is a record-level embed (see `images`, `quote`, `link`)."""
        rkey = self.next_tid()
        value: dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": created_at or now_iso(),
        }
        if reply:
            value["reply"] = reply
        if embed:
            value["embed"] = embed
        return self._store(did, "app.bsky.feed.post", rkey, value)

    def reply_to(self, parent: str) -> dict[str, Any]:
        """The `reply` field of a post answering `parent` (root taken from the parent's own)."""
        parent_reply = self.records[parent]["value"].get("reply")
        root = parent_reply["root"] if parent_reply else self.strong_ref(parent)
        return {"root": root, "parent": self.strong_ref(parent)}

    def images(self, *alts: str) -> dict[str, Any]:
        blob = {"$type": "blob", "ref": {"$link": fake_cid(alts)}, "mimeType": "image/jpeg", "size": 1000}
        return {"$type": "app.bsky.embed.images", "images": [{"alt": alt, "image": blob} for alt in alts]}

    def quote(self, uri: str, media: dict[str, Any] | None = None) -> dict[str, Any]:
        ref = {"uri": uri, "cid": self.records[uri]["cid"] if uri in self.records else fake_cid(uri)}
        if media:
            return {
                "$type": "app.bsky.embed.recordWithMedia",
                "record": {"$type": "app.bsky.embed.record", "record": ref},
                "media": media,
            }
        return {"$type": "app.bsky.embed.record", "record": ref}

    def link(self, url: str, title: str, description: str = "") -> dict[str, Any]:
        return {
            "$type": "app.bsky.embed.external",
            "external": {"uri": url, "title": title, "description": description},
        }

    def delete_post(self, uri: str) -> None:
        self.records.pop(uri, None)

    def strong_ref(self, uri: str) -> dict[str, str]:
        return {"uri": uri, "cid": self.records[uri]["cid"]}

    def add_notification(
        self, reason: str, author_did: str, text: str = "", subject: str | None = None
    ) -> None:
        if reason in ("mention", "reply", "quote"):
            uri = self.add_post(author_did, text)
            record = self.records[uri]["value"]
        else:
            kind = {
                "like": "app.bsky.feed.like",
                "repost": "app.bsky.feed.repost",
                "follow": "app.bsky.graph.follow",
            }[reason]
            record = {
                "$type": kind,
                "createdAt": now_iso(),
                "subject": self.did if reason == "follow" else self.strong_ref(subject or ""),
            }
            uri = f"at://{author_did}/{kind}/{self.next_tid()}"
        self.notifications.append(
            {
                "uri": uri,
                "cid": fake_cid(record),
                "author": self._profile_view(author_did),
                "reason": reason,
                **({"reasonSubject": subject} if subject else {}),
                "record": record,
                "isRead": False,
                "indexedAt": now_iso(),
                "labels": [],
            }
        )

    def writes(self, path: str = "/xrpc/com.atproto.repo.createRecord") -> list[dict[str, Any]]:
        return [r.json() for r in self.requests if r.path == path]

    # -- XRPC ------------------------------------------------------------------------------------
    def auth_failure(self, request: Recorded) -> Response:
        submitted = self.password
        if request.path.endswith("createSession") and request.body:
            submitted = str(request.json().get("password", ""))
        return json_response(
            401,
            {"error": "AuthenticationRequired", "message": f"Invalid identifier or password: {submitted}"},
        )

    def _store(self, did: str, collection: str, rkey: str, value: dict[str, Any]) -> str:
        uri = f"at://{did}/{collection}/{rkey}"
        self.records[uri] = {"cid": fake_cid(value), "value": value, "indexedAt": now_iso(), "likes": 0}
        return uri

    def _profile_view(self, did: str) -> dict[str, Any]:
        account = self.accounts[did]
        return {
            "did": did,
            "handle": account["handle"],
            "displayName": account["displayName"],
            "labels": list(self.account_labels.get(did, [])),
            "createdAt": "2024-01-01T00:00:00.000Z",
        }

    def _post_view(self, uri: str) -> dict[str, Any]:
        stored = self.records[uri]
        replies = sum(
            1
            for r in self.records.values()
            if r["value"].get("reply", {}).get("parent", {}).get("uri") == uri
        )
        embed = self._embed_view(uri.split("/")[2], stored["value"].get("embed"))
        return {
            "uri": uri,
            "cid": stored["cid"],
            "author": self._profile_view(uri.split("/")[2]),
            "record": stored["value"],
            **({"embed": embed} if embed else {}),
            "indexedAt": stored["indexedAt"],
            "likeCount": stored["likes"],
            "repostCount": 2,
            "replyCount": replies,
            "quoteCount": 0,
            "labels": [],
        }

    def _embed_view(self, did: str, embed: dict[str, Any] | None) -> dict[str, Any] | None:
        """The view the AppView hydrates from a record-level embed."""
        if not embed:
            return None
        kind = embed.get("$type")
        if kind == "app.bsky.embed.images":
            cdn = f"https://cdn.bsky.app/img/feed_fullsize/plain/{did}"
            return {
                "$type": "app.bsky.embed.images#view",
                "images": [
                    {"thumb": f"{cdn}/{i}@jpeg", "fullsize": f"{cdn}/{i}@jpeg", "alt": image["alt"]}
                    for i, image in enumerate(embed["images"])
                ],
            }
        if kind == "app.bsky.embed.external":
            return {"$type": "app.bsky.embed.external#view", "external": dict(embed["external"])}
        if kind == "app.bsky.embed.record":
            return {
                "$type": "app.bsky.embed.record#view",
                "record": self._view_record(embed["record"]["uri"]),
            }
        if kind == "app.bsky.embed.recordWithMedia":
            return {
                "$type": "app.bsky.embed.recordWithMedia#view",
                "record": {
                    "$type": "app.bsky.embed.record#view",
                    "record": self._view_record(embed["record"]["record"]["uri"]),
                },
                "media": self._embed_view(did, embed["media"]),
            }
        return None

    def _view_record(self, uri: str) -> dict[str, Any]:
        if uri not in self.records:
            return {"$type": "app.bsky.embed.record#viewNotFound", "uri": uri, "notFound": True}
        stored = self.records[uri]
        did = uri.split("/")[2]
        inner = self._embed_view(did, stored["value"].get("embed"))
        return {
            "$type": "app.bsky.embed.record#viewRecord",
            "uri": uri,
            "cid": stored["cid"],
            "author": self._profile_view(did),
            "value": stored["value"],
            "indexedAt": stored["indexedAt"],
            "likeCount": stored["likes"],
            "replyCount": 0,
            "repostCount": 0,
            "quoteCount": 0,
            "labels": [],
            **({"embeds": [inner]} if inner else {}),
        }

    def _thread_parent(self, uri: str, height: int) -> dict[str, Any] | None:
        """The parent chain of `uri` as the AppView nests it, `height` levels up."""
        parent_ref = self.records[uri]["value"].get("reply", {}).get("parent")
        if not parent_ref or height <= 0:
            return None
        parent = parent_ref["uri"]
        if parent not in self.records:
            return {"$type": "app.bsky.feed.defs#notFoundPost", "uri": parent, "notFound": True}
        node: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": self._post_view(parent)}
        above = self._thread_parent(parent, height - 1)
        if above:
            node["parent"] = above
        return node

    def _error(self, status: int, error: str, message: str) -> Response:
        return json_response(status, {"error": error, "message": message})

    def _authorised(self, request: Recorded) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.access_jwt}"

    def route(self, request: Recorded) -> Response:
        name = request.path.removeprefix("/xrpc/")
        handler = getattr(self, "x_" + name.replace(".", "_"), None)
        if handler is None:
            return self._error(501, "MethodNotImplemented", f"Method Not Implemented: {name}")
        query = {k: v[-1] for k, v in request.query.items()}
        needs_auth = (name.startswith("com.atproto.repo.") and request.method == "POST") or name.startswith(
            "app.bsky.notification."
        )
        if needs_auth and not self._authorised(request):
            return self._error(401, "AuthMissing", "Authentication Required")
        result: Response = handler(request, query)
        return result

    def x_com_atproto_server_createSession(self, request: Recorded, query: dict[str, str]) -> Response:
        body = request.json()
        if body.get("identifier") not in (self.handle, self.did) or body.get("password") != self.password:
            return self.auth_failure(request)
        return json_response(
            200,
            {
                "accessJwt": self.access_jwt,
                "refreshJwt": self.refresh_jwt,
                "handle": self.handle,
                "did": self.did,
                "active": True,
            },
        )

    def x_app_bsky_actor_getProfile(self, request: Recorded, query: dict[str, str]) -> Response:
        did = query["actor"] if query["actor"].startswith("did:") else _did_for(query["actor"])
        if did not in self.accounts:
            return self._error(400, "InvalidRequest", "Profile not found")
        view = self._profile_view(did)
        own = [u for u in self.records if u.startswith(f"at://{did}/app.bsky.feed.post/")]
        return json_response(
            200,
            {
                **view,
                "description": self.accounts[did]["description"],
                "followersCount": 12,
                "followsCount": 3,
                "postsCount": len(own),
            },
        )

    def x_com_atproto_identity_resolveHandle(self, request: Recorded, query: dict[str, str]) -> Response:
        did = _did_for(query.get("handle", ""))
        if did not in self.accounts:
            return self._error(400, "InvalidRequest", "Unable to resolve handle")
        return json_response(200, {"did": did})

    def x_com_atproto_repo_getRecord(self, request: Recorded, query: dict[str, str]) -> Response:
        uri = f"at://{query['repo']}/{query['collection']}/{query['rkey']}"
        if uri not in self.records:
            return self._error(400, "RecordNotFound", f"Could not locate record: {uri}")
        return json_response(
            200, {"uri": uri, "cid": self.records[uri]["cid"], "value": self.records[uri]["value"]}
        )

    def x_com_atproto_repo_createRecord(self, request: Recorded, query: dict[str, str]) -> Response:
        body = request.json()
        if body.get("repo") != self.did:
            return self._error(401, "AuthRequired", "Input/repo does not match the session")
        collection, record, rkey = body["collection"], body["record"], body.get("rkey")
        if rkey is None:
            rkey = self.next_tid()
        problem = validate_record(collection, rkey, record, self.records)
        if problem:
            return self._error(400, "InvalidRequest", problem)
        if f"at://{self.did}/{collection}/{rkey}" in self.records:
            return self._error(400, "InvalidRequest", "Record already exists")
        if collection == "app.bsky.feed.like":
            self.records[record["subject"]["uri"]]["likes"] += 1
        uri = self._store(self.did, collection, rkey, record)
        return json_response(
            200,
            {
                "uri": uri,
                "cid": self.records[uri]["cid"],
                "validationStatus": "valid",
                "commit": {"cid": fake_cid(uri), "rev": "3lcommit2222a"},
            },
        )

    def x_com_atproto_repo_deleteRecord(self, request: Recorded, query: dict[str, str]) -> Response:
        body = request.json()
        self.records.pop(f"at://{body['repo']}/{body['collection']}/{body['rkey']}", None)
        return json_response(200, {"commit": {"cid": fake_cid(body), "rev": "3lcommit3333a"}})

    def x_app_bsky_notification_listNotifications(self, request: Recorded, query: dict[str, str]) -> Response:
        limit = int(query.get("limit", 50))
        return json_response(200, {"notifications": self.notifications[:limit], "seenAt": now_iso()})

    def x_app_bsky_feed_getPosts(self, request: Recorded, query: dict[str, str]) -> Response:
        return json_response(
            200, {"posts": [self._post_view(u) for u in request.query.get("uris", []) if u in self.records]}
        )

    def x_app_bsky_feed_searchPosts(self, request: Recorded, query: dict[str, str]) -> Response:
        terms = query.get("q", "").lower().split()  # every term must appear, as the AppView's search does
        hits = [
            u
            for u, r in self.records.items()
            if r["value"].get("$type") == "app.bsky.feed.post"
            and terms
            and all(term in r["value"]["text"].lower() for term in terms)
        ]
        hits = hits[: int(query.get("limit", 25))]
        return json_response(200, {"posts": [self._post_view(u) for u in hits], "hitsTotal": len(hits)})

    def x_app_bsky_feed_getPostThread(self, request: Recorded, query: dict[str, str]) -> Response:
        uri = query["uri"]
        if uri not in self.records:
            return self._error(400, "NotFound", f"Post not found: {uri}")
        replies = [
            {"$type": "app.bsky.feed.defs#threadViewPost", "post": self._post_view(u), "replies": []}
            for u, r in self.records.items()
            if r["value"].get("reply", {}).get("parent", {}).get("uri") == uri
        ]
        thread: dict[str, Any] = {
            "$type": "app.bsky.feed.defs#threadViewPost",
            "post": self._post_view(uri),
            "replies": replies,
        }
        parent = self._thread_parent(uri, int(query.get("parentHeight", 80)))
        if parent:
            thread["parent"] = parent
        return json_response(200, {"thread": thread})


def _valid_strong_ref(ref: Any, records: dict[str, Any]) -> bool:
    return (
        isinstance(ref, dict) and ref.get("uri") in records and ref.get("cid") == records[ref["uri"]]["cid"]
    )


def validate_record(
    collection: str, rkey: str, record: dict[str, Any], records: dict[str, Any]
) -> str | None:
    """Why the PDS would refuse this record (lexicon validation), or None."""
    if record.get("$type") != collection:
        return "Invalid $type: must match the collection"
    if not TID_RE.match(rkey):
        return f"Invalid record key for {collection}: must be a TID"
    try:
        datetime.fromisoformat(str(record.get("createdAt", "")).replace("Z", "+00:00"))
    except ValueError:
        return "Record/createdAt must be a valid datetime"
    if collection == "app.bsky.feed.like":
        return (
            None
            if _valid_strong_ref(record.get("subject"), records)
            else "Record/subject must be a strong ref"
        )
    text = record.get("text", "")
    if len(regex.findall(r"\X", text)) > 300 or len(text.encode()) > 3000:
        return "Record/text must not be longer than 300 graphemes"
    for facet in record.get("facets") or []:
        index = facet.get("index", {})
        if not 0 <= index.get("byteStart", -1) < index.get("byteEnd", -1) <= len(text.encode()):
            return "Record/facets: byte slice out of range"
    reply = record.get("reply")
    if reply and not (
        _valid_strong_ref(reply.get("root"), records) and _valid_strong_ref(reply.get("parent"), records)
    ):
        return "Record/reply must have valid root and parent strong refs"
    embed = record.get("embed")
    if (
        embed
        and embed.get("$type") == "app.bsky.embed.record"
        and not _valid_strong_ref(embed.get("record"), records)
    ):
        return "Record/embed/record must be a strong ref"
    return None
