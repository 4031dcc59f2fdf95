"""A fake X API v2 on 127.0.0.1 for tweepy: checks each request's OAuth 1.0a HMAC-SHA1 signature
against the consumer and access-token secrets (as X does) and answers in API v2 JSON shapes.

Failure modes as in `RecordingServer`; a 429 carries `x-rate-limit-reset` like X's.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from oauthlib.oauth1.rfc5849 import signature, utils

from tests.support.recording_server import Recorded, RecordingServer, Response, json_response

ME_ID = "1500000000000000001"


class FakeX(RecordingServer):
    def __init__(self, api_key: str = "ck", api_secret: str = "cs",
                 access_token: str = f"{ME_ID}-fakeaccesstoken", access_secret: str = "as",
                 username: str = "safeclaw_bot") -> None:
        super().__init__()
        self.api_key, self.api_secret = api_key, api_secret
        self.access_token, self.access_secret = access_token, access_secret
        self.username = username
        self.tweets: dict[str, dict[str, Any]] = {}
        self.mentions: list[dict[str, Any]] = []
        self.users: dict[str, str] = {ME_ID: username}
        self.likes: list[str] = []
        self._ids = (str(1800000000000000000 + n) for n in itertools.count(1))

    def add_mention(self, author: str, text: str, reply: bool = False) -> dict[str, Any]:
        author_id = str(2000 + len(self.users))
        self.users[author_id] = author
        tweet = {"id": next(self._ids), "text": text, "author_id": author_id,
                 "created_at": "2026-02-01T12:00:00.000Z", "edit_history_tweet_ids": []}
        tweet["edit_history_tweet_ids"] = [tweet["id"]]
        if reply:
            tweet["referenced_tweets"] = [{"type": "replied_to", "id": "1799999999999999999"}]
        self.mentions.append(tweet)
        return tweet

    def add_tweet(self, text: str, author_id: str = ME_ID) -> dict[str, Any]:
        """A tweet in the timeline (the account's own unless another author is given)."""
        if author_id not in self.users:
            self.users[author_id] = f"user{author_id}"
        ident = next(self._ids)
        tweet = {"id": ident, "text": text, "author_id": author_id, "edit_history_tweet_ids": [ident],
                 "public_metrics": {"retweet_count": 0, "reply_count": 0, "like_count": 0, "quote_count": 0,
                                    "bookmark_count": 0, "impression_count": 0}}
        self.tweets[ident] = tweet
        return tweet

    def failure(self, request: Recorded) -> Response | None:
        if self.fail_mode == "rate":
            body = {"title": "Too Many Requests", "detail": "Too Many Requests", "status": 429}
            return json_response(429, body,
                                 {"x-rate-limit-reset": str(int(time.time()) + int(self.retry_after)),
                                  "x-rate-limit-remaining": "0"})
        return super().failure(request)

    def echo(self, request: Recorded) -> str:
        return f"Could not authenticate you: {request.headers.get('authorization')} secret={self.api_secret}"

    def signature_ok(self, request: Recorded) -> bool:
        header = request.headers.get("authorization", "")
        if not header.startswith("OAuth "):
            return False
        oauth = {k: utils.unescape(v) for k, v in utils.parse_authorization_header(header)}
        if oauth.get("oauth_consumer_key") != self.api_key or oauth.get("oauth_token") != self.access_token:
            return False
        params = signature.collect_parameters(uri_query=request.raw_query, headers={"Authorization": header},
                                              exclude_oauth_signature=True)
        base = signature.signature_base_string(
            request.method, signature.base_string_uri(self.url + request.path),
            signature.normalize_parameters(params))
        expected = signature.sign_hmac_sha1(base, self.api_secret, self.access_secret)
        return oauth.get("oauth_signature") == expected and oauth.get("oauth_signature_method") == "HMAC-SHA1"

    def route(self, request: Recorded) -> Response:
        if not self.signature_ok(request):
            return json_response(401, {"title": "Unauthorized", "detail": "Unauthorized", "status": 401})
        parts = request.path.strip("/").split("/")
        if parts[:1] != ["2"]:
            return json_response(404, {"title": "Not Found Error", "status": 404})
        return self._dispatch(request, parts[1:])

    def _dispatch(self, request: Recorded, parts: list[str]) -> Response:
        method = request.method
        if method == "GET" and parts == ["users", "me"]:
            return json_response(200, {"data": {
                "id": ME_ID, "name": "SafeClaw", "username": self.username, "description": "an agent",
                "created_at": "2026-01-01T00:00:00.000Z",
                "public_metrics": {"followers_count": 7, "following_count": 3, "tweet_count": 11,
                                   "listed_count": 0, "like_count": 2}}})
        if method == "POST" and parts == ["tweets"]:
            return self._create(request.json() or {})
        if method == "DELETE" and len(parts) == 2 and parts[0] == "tweets":
            deleted = self.tweets.pop(parts[1], None) is not None
            return json_response(200, {"data": {"deleted": deleted}})
        if method == "GET" and len(parts) == 2 and parts[0] == "tweets":
            return self._tweet(parts[1], request.query.get("tweet.fields", [""])[0].split(","))
        if method == "POST" and len(parts) == 3 and parts[0] == "users" and parts[2] == "likes":
            if parts[1] != ME_ID:
                return json_response(403, {"title": "Forbidden", "status": 403})
            self.likes.append((request.json() or {}).get("tweet_id", ""))
            return json_response(200, {"data": {"liked": True}})
        if method == "GET" and len(parts) == 3 and parts[0] == "users" and parts[2] == "mentions":
            return self._mentions(request)
        return json_response(404, {"title": "Not Found Error", "status": 404})

    def _create(self, body: dict[str, Any]) -> Response:
        if not isinstance(body.get("text"), str):
            return json_response(400, {"title": "Invalid Request", "status": 400})
        ident = next(self._ids)
        tweet = {"id": ident, "text": body["text"], "author_id": ME_ID, "edit_history_tweet_ids": [ident],
                 "reply": body.get("reply"), "quote_tweet_id": body.get("quote_tweet_id"),
                 "public_metrics": {"retweet_count": 2, "reply_count": 1, "like_count": 9, "quote_count": 0,
                                    "bookmark_count": 1, "impression_count": 120}}
        self.tweets[ident] = tweet
        return json_response(201, {"data": {"id": ident, "text": body["text"],
                                            "edit_history_tweet_ids": [ident]}})

    def _tweet(self, ident: str, fields: list[str]) -> Response:
        tweet = self.tweets.get(ident)
        if tweet is None:
            return json_response(200, {"errors": [{"resource_id": ident, "title": "Not Found Error",
                                                   "detail": f"Could not find tweet with id: [{ident}].",
                                                   "type": "https://api.twitter.com/2/problems/resource-not-found"}]})
        # As X: the default fields, and of the others only those asked for.
        shown = {"id", "text", "edit_history_tweet_ids"} | {f for f in fields if f in tweet}
        return json_response(200, {"data": {k: tweet[k] for k in sorted(shown)}})

    def _mentions(self, request: Recorded) -> Response:
        limit = int(request.query.get("max_results", ["10"])[0])
        if not 5 <= limit <= 100:
            return json_response(400, {"title": "Invalid Request", "status": 400})
        tweets = self.mentions[:limit]
        authors = sorted({t["author_id"] for t in tweets})
        return json_response(200, {
            "data": tweets,
            "includes": {"users": [{"id": a, "name": self.users[a].title(), "username": self.users[a]}
                                   for a in authors]},
            "meta": {"result_count": len(tweets)}})
