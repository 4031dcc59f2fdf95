"""X (Twitter) through `tweepy.Client`, API v2, with OAuth 1.0a user context.

`X_API_BASE` (default https://api.twitter.com) moves every call to another host, for tests and
proxies. tweepy builds each URL as "https://api.twitter.com" + route and offers no setting for
it, so `_XSession` (the `requests.Session` tweepy sends through) rewrites that prefix before the
request is prepared; the OAuth 1.0a signature is then computed over the real target URL. The same
session adds the router's timeout, which tweepy never sets.

tweepy, oauthlib and requests-oauthlib log raw response bodies and OAuth parameters (consumer key,
access token) at DEBUG level, so their loggers are held at INFO here.

Posts are cut to 280 weighted characters the way X counts them (twitter-text v3, see
`router.platforms.text_limits`): most Latin-range characters weigh 1, CJK and other scripts 2,
an emoji sequence 2, a URL 23; the cut falls on a grapheme boundary and never inside a URL.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import requests
import tweepy

from router.errors import SkillError
from router.platforms.base import Notification, PlatformClient, PostRef, PostRequest, refuse_cut
from router.platforms.http_errors import error_for_status
from router.platforms.http_session import WriteCheckedSession
from router.platforms.text_limits import URL_WEIGHT, X_LIMIT, truncate, x_weighted_length

for _noisy in ("tweepy.client", "oauthlib", "requests_oauthlib"):
    logging.getLogger(_noisy).setLevel(logging.INFO)

TWITTER_HOST = "https://api.twitter.com"
_STATUS_URL = re.compile(r"(?:x|twitter)\.com/[^/]+/status(?:es)?/(\d{1,25})", re.IGNORECASE)
_T = TypeVar("_T")


class _XSession(WriteCheckedSession):
    """Sends tweepy's requests to `base` instead of api.twitter.com, with a timeout; its writes ask
    `before_write` first (tweepy sends every request through here)."""

    def __init__(self, base: str, timeout: float, before_write: Callable[[], None]) -> None:
        super().__init__(before_write)
        self.base = base.rstrip("/").removesuffix("/2")
        self.timeout = timeout

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        if isinstance(url, str) and url.startswith(TWITTER_HOST):
            url = self.base + url[len(TWITTER_HOST):]
        kwargs.setdefault("timeout", self.timeout)
        return super().request(method, url, *args, **kwargs)


def compose_tweet(text: str, url: str | None) -> tuple[str, bool]:
    """The tweet text with the link appended (if not already there), within 280 weighted chars.

    The cut (see `text_limits.truncate`) falls on a grapheme boundary and never inside a URL."""
    if not url or url in text:
        return truncate(text, X_LIMIT, x_weighted_length)
    body, cut = truncate(text, X_LIMIT - URL_WEIGHT - 1, x_weighted_length)
    return (f"{body} {url}" if body else url), cut


def tweet_id(ref: str) -> str:
    """A tweet id from an id or an x.com / twitter.com status URL."""
    ref = ref.strip()
    if ref.isdigit():
        return ref
    found = _STATUS_URL.search(ref)
    if found:
        return found.group(1)
    raise SkillError("invalid_params", "an X post id is a number or an x.com/<user>/status/<id> URL")


def _translate(exc: Exception) -> SkillError:
    """One safe SkillError for any tweepy/requests failure: no body, no credential."""
    if isinstance(exc, SkillError):
        return exc
    if isinstance(exc, tweepy.HTTPException) and exc.response is not None:
        return error_for_status("X", exc.response.status_code, exc.response.headers, "request")
    # A body broken off midway (the router hung up: a deadline, a flood past its byte budget) is a
    # failed request like a lost connection.
    broken = requests.Timeout | requests.ConnectionError | requests.exceptions.ChunkedEncodingError
    if isinstance(exc, broken):
        return SkillError("request_failed", f"X could not be reached ({type(exc).__name__})")
    return SkillError("internal_error", f"X client failed ({type(exc).__name__})")


class XClient(PlatformClient):
    key = "x"
    required = ("X_API_KEY", "X_API_SECRET", "X_ACCESS_TOKEN", "X_ACCESS_SECRET")

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        super().__init__(credentials, env, timeout)
        self._client: tweepy.Client | None = None
        self._me: Any = None

    def retime(self, timeout: float) -> None:
        super().retime(timeout)
        if self._client is not None:
            self._client.session.timeout = timeout

    def close(self) -> None:
        if self._client is not None:
            self._client.session.close()

    def _api(self) -> tweepy.Client:
        if self._client is None:
            client = tweepy.Client(
                consumer_key=self.credentials["X_API_KEY"],
                consumer_secret=self.credentials["X_API_SECRET"],
                access_token=self.credentials["X_ACCESS_TOKEN"],
                access_token_secret=self.credentials["X_ACCESS_SECRET"],
            )
            base = self.env.get("X_API_BASE") or TWITTER_HOST
            client.session = _XSession(base, self.timeout, self.before_write)
            self._client = client
        return self._client

    def _call(self, action: Callable[[tweepy.Client], _T]) -> _T:
        try:
            return action(self._api())
        except Exception as exc:
            raise _translate(exc) from None

    def _whoami(self) -> Any:
        if self._me is None:
            fields = ["description", "public_metrics", "created_at"]
            self._me = self._call(lambda c: c.get_me(user_fields=fields, user_auth=True)).data
        return self._me

    def _url(self, ident: str) -> str:
        return f"https://x.com/{self._whoami().username}/status/{ident}"

    def auth_test(self) -> dict[str, Any]:
        me = self._whoami()
        return {"handle": f"@{me.username}", "id": str(me.id)}

    def profile(self) -> dict[str, Any]:
        me = self._whoami()
        metrics = me.public_metrics or {}
        return {
            "handle": f"@{me.username}",
            "id": str(me.id),
            "display_name": me.name,
            "description": me.description or "",
            "followers": metrics.get("followers_count", 0),
            "following": metrics.get("following_count", 0),
            "posts": metrics.get("tweet_count", 0),
            "url": f"https://x.com/{me.username}",
        }

    def post(self, request: PostRequest) -> PostRef:
        text, cut = compose_tweet(request.text, request.url)
        refuse_cut(self.key, request.whole, cut)
        reply_to = tweet_id(request.reply_to) if request.reply_to else None
        quote = tweet_id(request.quote) if request.quote else None
        # The public URL needs our username: ask before posting, so a failure there (users/me has
        # a far smaller rate limit) is an error of a post that was never made.
        self._whoami()
        created = self._call(
            lambda c: c.create_tweet(
                text=text, in_reply_to_tweet_id=reply_to, quote_tweet_id=quote, user_auth=True
            )
        )
        ident = str(created.data["id"])
        ref = PostRef(id=ident, url=self._url(ident))
        if cut:
            ref.extra["truncated"] = True
        return ref

    def delete(self, post_id: str) -> dict[str, Any]:
        ident = tweet_id(post_id)
        found = self._call(lambda c: c.get_tweet(ident, tweet_fields=["author_id"], user_auth=True))
        if found.data is None:
            raise SkillError("not_found", "X has no such post")
        if str(found.data.author_id) != str(self._whoami().id):
            raise self.not_own("delete")
        response = self._call(lambda c: c.delete_tweet(ident, user_auth=True))
        return {"deleted": bool(response.data.get("deleted")), "id": ident}

    def like(self, post_id: str) -> dict[str, Any]:
        ident = tweet_id(post_id)
        # tweepy takes our user id from the access token's "<user id>-..." prefix, as X issues them
        response = self._call(lambda c: c.like(ident, user_auth=True))
        return {"liked": bool(response.data.get("liked")), "id": ident}

    def notifications(self, limit: int) -> list[Notification]:
        me = self._whoami()
        response = self._call(lambda c: c.get_users_mentions(
            me.id, max_results=max(5, min(limit, 100)), expansions=["author_id"],
            tweet_fields=["created_at", "referenced_tweets"], user_fields=["username"], user_auth=True,
        ))
        users = {str(u.id): u.username for u in (response.includes or {}).get("users", [])}
        return [self._notification(tweet, users) for tweet in (response.data or [])[:limit]]

    @staticmethod
    def _notification(tweet: Any, users: dict[str, str]) -> Notification:
        referenced = [getattr(r, "type", None) or r.get("type") for r in (tweet.referenced_tweets or [])]
        username = users.get(str(tweet.author_id), str(tweet.author_id))
        return Notification(
            kind="reply" if "replied_to" in referenced else "mention",
            author=f"@{username}",
            text=tweet.text,
            post_id=str(tweet.id),
            url=f"https://x.com/{username}/status/{tweet.id}",
            created_at=tweet.created_at.isoformat() if tweet.created_at else "",
        )

    def metrics(self, post_id: str) -> dict[str, Any]:
        ident = tweet_id(post_id)
        response = self._call(lambda c: c.get_tweet(ident, tweet_fields=["public_metrics"], user_auth=True))
        if response.data is None:
            raise SkillError("not_found", "X has no such post")
        metrics = response.data.public_metrics or {}
        return {
            "likes": metrics.get("like_count", 0),
            "reposts": metrics.get("retweet_count", 0),
            "replies": metrics.get("reply_count", 0),
            "quotes": metrics.get("quote_count", 0),
            "bookmarks": metrics.get("bookmark_count", 0),
            "impressions": metrics.get("impression_count", 0),
        }
