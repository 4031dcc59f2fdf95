"""Reddit through `praw`, with the script-app password grant.

Endpoints (overridable for tests and proxies): the token comes from `REDDIT_URL` +
`/api/v1/access_token` (default https://www.reddit.com), every API call goes to
`REDDIT_OAUTH_URL` (default https://oauth.reddit.com). Public URLs always name reddit.com.

Two praw defaults are changed on purpose:
- praw retries a request after a 5xx or a read timeout. A retried `submit` can post twice, and
  the router guarantees a side effect at most once, so the client makes one attempt and reports
  `request_failed`; the router decides about retries.
- prawcore applies its own 16 s timeout to API calls whatever the requestor says; `_Requestor`
  enforces the router's timeout on every call instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import praw
import prawcore
import requests
from praw.exceptions import ClientException, RedditAPIException
from prawcore.sessions import RetryStrategy

from router.errors import SkillError
from router.platforms.base import Notification, PlatformClient, PostRef, PostRequest, is_write, refuse_cut
from router.platforms.http_errors import error_for_status
from router.platforms.titles import TITLE_LIMIT, reddit_title

PUBLIC_URL = "https://www.reddit.com"
SELF_POST_LIMIT = 40_000
COMMENT_LIMIT = 10_000
_FULLNAME = re.compile(r"^t([13])_([a-z0-9]{1,13})$", re.IGNORECASE)
_COMMENTS_URL = re.compile(r"/comments/([a-z0-9]{1,13})(?:/[^/?#]*/([a-z0-9]{1,13}))?", re.IGNORECASE)
_T = TypeVar("_T")
TOKEN_PATHS = frozenset({"/api/v1/access_token", "/api/v1/revoke_token"})  # the login's own


@dataclass(frozen=True)
class _SingleAttempt(RetryStrategy):
    """praw's retry strategy, set to never retry (see the module docstring)."""

    def _sleep_seconds(self) -> float | None:
        return None

    def consume_available_retry(self) -> _SingleAttempt:
        return self

    def should_retry_on_failure(self) -> bool:
        return False


class _Requestor(prawcore.Requestor):
    """Applies the router's timeout to every call (prawcore passes its own default otherwise): the
    client's current one, which a kept client's next command may change. Each write asks the
    client's `before_write` here, the last step before it leaves: after praw's token exchange and
    its rate-limit wait."""

    def __init__(self, *, client: RedditClient, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client

    def request(self, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        method = str(kwargs.get("method", args[0] if args else ""))
        url = str(kwargs.get("url", args[1] if len(args) > 1 else ""))
        if is_write(method, urlsplit(url).path, TOKEN_PATHS):
            self.client.before_write()
        return super().request(*args, timeout=self.client.timeout, **kwargs)


def _translate(exc: Exception) -> SkillError:
    """One safe SkillError for any praw/prawcore failure: no body, no credential."""
    if isinstance(exc, SkillError):
        return exc
    if isinstance(exc, prawcore.OAuthException):
        return SkillError("auth_failed", "reddit refused the username or password")
    if isinstance(exc, prawcore.ResponseException):
        return error_for_status("reddit", exc.response.status_code, exc.response.headers)
    if isinstance(exc, prawcore.RequestException):
        cause = type(exc.original_exception).__name__
        return SkillError("request_failed", f"reddit could not be reached ({cause})")
    if isinstance(exc, RedditAPIException):
        kinds = {str(item.error_type) for item in exc.items}  # codes only: never reddit's own words
        kinds = {kind for kind in kinds if re.fullmatch(r"[A-Z][A-Z0-9_]{0,39}", kind)} or {"unnamed"}
        if "RATELIMIT" in kinds:
            return SkillError("rate_limited", "reddit asks to wait before posting again")
        return SkillError("internal_error", f"reddit rejected the request ({', '.join(sorted(kinds))[:80]})")
    if isinstance(exc, ClientException):
        return SkillError("invalid_params", "reddit could not use that post id or URL")
    return SkillError("internal_error", f"reddit client failed ({type(exc).__name__})")


def _iso(created_utc: float | None) -> str:
    return datetime.fromtimestamp(float(created_utc or 0), tz=UTC).isoformat()


def _clip(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


class RedditClient(PlatformClient):
    key = "reddit"
    required = ("REDDIT_CLIENT_ID", "REDDIT_SECRET", "REDDIT_USERNAME", "REDDIT_PASSWORD")
    user_agent: ClassVar[str] = "python:safeclaw-router:0.1"

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        super().__init__(credentials, env, timeout)
        self._reddit: praw.Reddit | None = None
        self._http = requests.Session()  # prawcore's session: its connections and token are kept

    def close(self) -> None:
        self._http.close()

    def _api(self) -> praw.Reddit:
        if self._reddit is None:
            username = self.credentials["REDDIT_USERNAME"]
            self._reddit = praw.Reddit(
                client_id=self.credentials["REDDIT_CLIENT_ID"],
                client_secret=self.credentials["REDDIT_SECRET"],
                username=username,
                password=self.credentials["REDDIT_PASSWORD"],
                user_agent=f"{self.user_agent} (by u/{username})",
                oauth_url=self.env.get("REDDIT_OAUTH_URL") or "https://oauth.reddit.com",
                reddit_url=self.env.get("REDDIT_URL") or PUBLIC_URL,
                check_for_updates=False,
                check_for_async=False,
                requestor_class=_Requestor,
                requestor_kwargs={"client": self, "session": self._http},
            )
            for core in (self._reddit._core, self._reddit._read_only_core, self._reddit._authorized_core):
                if core is not None:
                    core._retry_strategy_class = _SingleAttempt
        return self._reddit

    def _call(self, action: Callable[[praw.Reddit], _T]) -> _T:
        try:
            return action(self._api())
        except Exception as exc:
            raise _translate(exc) from None

    def _target(self, reddit: praw.Reddit, ref: str) -> Any:
        """A Submission or Comment from a t3_/t1_ fullname, a reddit URL or a bare submission id."""
        ref = ref.strip()
        fullname = _FULLNAME.match(ref)
        if fullname:
            kind, ident = fullname.groups()
            return reddit.comment(ident) if kind == "1" else reddit.submission(ident)
        if ref.startswith(("http://", "https://")):
            found = _COMMENTS_URL.search(ref)
            if not found:
                raise SkillError("invalid_params", "not a reddit post or comment URL")
            submission_id, comment_id = found.groups()
            return reddit.comment(comment_id) if comment_id else reddit.submission(submission_id)
        if re.fullmatch(r"[a-z0-9]{1,13}", ref, re.IGNORECASE):
            return reddit.submission(ref)
        raise SkillError("invalid_params", "reddit ids look like t3_abc123, t1_abc123 or a reddit URL")

    def _me(self) -> Any:
        me = self._call(lambda r: r.user.me())
        if me is None:
            raise SkillError("auth_failed", "reddit did not say who these credentials belong to")
        return me

    def auth_test(self) -> dict[str, Any]:
        me = self._me()
        return {"handle": f"u/{me.name}", "id": f"t2_{me.id}"}

    def profile(self) -> dict[str, Any]:
        me = self._me()
        return {
            "handle": f"u/{me.name}",
            "id": f"t2_{me.id}",
            "link_karma": getattr(me, "link_karma", 0),
            "comment_karma": getattr(me, "comment_karma", 0),
            "created_at": _iso(getattr(me, "created_utc", None)),
            "url": f"{PUBLIC_URL}/user/{me.name}",
        }

    def post(self, request: PostRequest) -> PostRef:
        if request.reply_to:
            return self._reply(request)
        if not request.subreddit:
            raise SkillError("invalid_params", "a reddit post needs a subreddit")
        title = (request.title or "").strip() or reddit_title(request.text)
        title, title_cut = _clip(title, TITLE_LIMIT)
        body, body_cut = _clip(request.text, SELF_POST_LIMIT)
        refuse_cut(self.key, request.whole, body_cut or (title_cut and bool(request.title)))
        subreddit = request.subreddit.removeprefix("r/")

        def submit(reddit: praw.Reddit) -> Any:
            sub = reddit.subreddit(subreddit)
            if request.url:
                extra = body if body.strip() and body.strip() != title else None
                return sub.submit(title, url=request.url, selftext=extra, send_replies=True)
            return sub.submit(title, selftext=body, send_replies=True)

        submission = self._call(submit)
        ref = PostRef(id=f"t3_{submission.id}", url=f"{PUBLIC_URL}/comments/{submission.id}/")
        if title_cut or body_cut:
            ref.extra["truncated"] = True
        return ref

    def _reply(self, request: PostRequest) -> PostRef:
        body, cut = _clip(request.text + (f"\n\n{request.url}" if request.url else ""), COMMENT_LIMIT)
        refuse_cut(self.key, request.whole, cut)
        reply_to = request.reply_to or ""
        comment = self._call(lambda r: self._target(r, reply_to).reply(body))
        permalink = getattr(comment, "permalink", "") or f"/comments/{comment.link_id[3:]}/_/{comment.id}/"
        ref = PostRef(id=f"t1_{comment.id}", url=PUBLIC_URL + permalink)
        if cut:
            ref.extra["truncated"] = True
        return ref

    def delete(self, post_id: str) -> dict[str, Any]:
        def delete_own(reddit: praw.Reddit) -> None:
            thing = self._thing(reddit, post_id)
            author = getattr(thing, "author", None)
            if author is None or str(author.name).lower() != self.credentials["REDDIT_USERNAME"].lower():
                raise self.not_own("delete")
            thing.delete()

        self._call(delete_own)
        return {"deleted": True, "id": post_id}

    def like(self, post_id: str) -> dict[str, Any]:
        self._call(lambda r: self._target(r, post_id).upvote())
        return {"liked": True, "id": post_id}

    def notifications(self, limit: int) -> list[Notification]:
        items = self._call(lambda r: list(r.inbox.all(limit=max(1, min(limit, 100)))))
        return [self._notification(item) for item in items]

    @staticmethod
    def _notification(item: Any) -> Notification:
        subject = getattr(item, "subject", "") or ""
        was_comment = bool(getattr(item, "was_comment", False))
        if was_comment and "mention" in subject.lower():
            kind = "mention"
        elif was_comment:
            kind = "reply"
        else:
            kind = "other"
        context = getattr(item, "context", "") or ""
        author = getattr(item, "author", None)
        return Notification(
            kind=kind,
            author=f"u/{author.name}" if author is not None else "[deleted]",
            text=getattr(item, "body", "") or "",
            post_id=getattr(item, "fullname", None) or getattr(item, "name", None),
            url=PUBLIC_URL + context.split("?")[0] if context else None,
            created_at=_iso(getattr(item, "created_utc", None)),
        )

    def _thing(self, reddit: praw.Reddit, ref: str) -> Any:
        """The post or comment as reddit has it now (its author, its score)."""
        found = list(reddit.info(fullnames=[self._target(reddit, ref).fullname]))
        if not found:
            raise SkillError("not_found", "reddit has no such post or comment")
        return found[0]

    def metrics(self, post_id: str) -> dict[str, Any]:
        thing = self._call(lambda r: self._thing(r, post_id))
        result: dict[str, Any] = {"likes": thing.score, "score": thing.score}
        if hasattr(thing, "num_comments"):
            result["replies"] = thing.num_comments
            result["upvote_ratio"] = getattr(thing, "upvote_ratio", None)
        return result
