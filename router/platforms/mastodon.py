"""Mastodon through `Mastodon.py`: MASTODON_INSTANCE (a URL) and MASTODON_TOKEN (an access token).

Post ids are status ids of the account's own instance; a status URL on that instance
(`https://instance/@user/<id>`) is accepted too. A post carries the command id as its
`Idempotency-Key`, so the instance answers a retried post with the status it already made.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from html.parser import HTMLParser
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mastodon import Mastodon, MastodonAPIError, MastodonRatelimitError

from router.errors import SkillError
from router.platforms.base import Notification, PlatformClient, PostRef, PostRequest, refuse_cut
from router.platforms.http_errors import error_for_status, error_from_exception
from router.platforms.http_session import session_for
from router.platforms.text_limits import MASTODON_DEFAULT_LIMIT, URL_WEIGHT, mastodon_length, truncate

NOTIFICATION_TYPES = ["mention", "favourite", "follow", "reblog"]
_KINDS = {"favourite": "like", "reblog": "repost", "follow": "follow", "mention": "mention"}
_STATUS_ID = re.compile(r"^[0-9]{1,30}$")
_STATUS_URL_ID = re.compile(r"/(?:@[^/]+|users/[^/]+/statuses|web/statuses|statuses)/([0-9]{1,30})/?$")

T = TypeVar("T")


class _PlainText(HTMLParser):
    """Mastodon's status HTML (p, br, a, span) as plain text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "p" and self.parts:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(html: str | None) -> str:
    if not html:
        return ""
    parser = _PlainText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts).strip()


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value or "")


class MastodonClient(PlatformClient):
    key = "mastodon"
    required = ("MASTODON_INSTANCE", "MASTODON_TOKEN")

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        super().__init__(credentials, env, timeout)
        self.instance = credentials["MASTODON_INSTANCE"].rstrip("/")
        # Kept with the client (its connection is reused); its writes ask `before_write` first.
        self.session = session_for(self.instance, self.before_write)
        self.api = Mastodon(
            api_base_url=self.instance,
            session=self.session,
            access_token=credentials["MASTODON_TOKEN"],
            request_timeout=timeout,
            ratelimit_method="throw",  # never sleep inside a skill: report rate_limited instead
            version_check_mode="none",
        )
        self._char_limit: int | None = None
        self._account_id = ""

    def retime(self, timeout: float) -> None:
        super().retime(timeout)
        self.api.request_timeout = timeout

    def close(self) -> None:
        self.session.close()

    def _guard(self, doing: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except SkillError:
            raise
        except MastodonRatelimitError:
            reset = self.api.ratelimit_reset
            wait = round(max(reset - time.time(), 0.0), 3) if reset else None
            hint = f"; retry after {wait:g} s" if wait is not None else ""
            raise SkillError("rate_limited", f"mastodon rate limit hit during {doing}{hint}",
                             retry_after=wait) from None
        except MastodonAPIError as exc:
            status = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
            raise (error_for_status("mastodon", status, None, doing) if status
                   else error_from_exception(exc, "mastodon", doing)) from None
        except Exception as exc:
            raise error_from_exception(exc, "mastodon", doing) from None

    def status_id(self, ref: str) -> str:
        """The status id of an id or a status URL on this account's instance."""
        ref = ref.strip()
        if _STATUS_ID.match(ref):
            return ref
        match = _STATUS_URL_ID.search(ref)
        if match and urlsplit(ref).netloc == urlsplit(self.instance).netloc:
            return match.group(1)
        raise SkillError("invalid_params", "a Mastodon post id is a status id or a status URL on "
                         f"{urlsplit(self.instance).netloc}")

    def char_limit(self) -> int:
        """The instance's status length limit (`/api/v2/instance`), else Mastodon's default 500."""
        if self._char_limit is None:
            try:
                info = self.api.instance_v2()
                limit = int(info["configuration"]["statuses"]["max_characters"])
            except (MastodonRatelimitError, KeyError, TypeError, ValueError):
                limit = MASTODON_DEFAULT_LIMIT
            except Exception as exc:
                error = error_from_exception(exc, "mastodon", "instance lookup")
                if error.kind == "auth_failed":
                    raise error from None
                limit = MASTODON_DEFAULT_LIMIT
            self._char_limit = limit if limit > URL_WEIGHT + 1 else MASTODON_DEFAULT_LIMIT
        return self._char_limit

    def auth_test(self) -> dict[str, Any]:
        account = self._guard("login", self.api.account_verify_credentials)
        self._account_id = str(account["id"])
        return {"platform": self.key, "handle": account["acct"], "id": self._account_id}

    def own_account_id(self) -> str:
        """The token's account id (asked once per kept client)."""
        if not self._account_id:
            self.auth_test()
        return self._account_id

    def _fit_text(self, request: PostRequest) -> tuple[str, bool]:
        limit = self.char_limit()
        if not request.url or request.url in request.text:
            return truncate(request.text, limit, mastodon_length)
        body, truncated = truncate(request.text.rstrip(), limit - URL_WEIGHT - 1, mastodon_length)
        return (f"{body} {request.url}" if body else request.url), truncated

    def post(self, request: PostRequest) -> PostRef:
        text, truncated = self._fit_text(request)
        refuse_cut(self.key, request.whole, truncated)
        reply_id = self.status_id(request.reply_to) if request.reply_to else None
        quote_id = self.status_id(request.quote) if request.quote else None
        status = self._guard("post", lambda: self.api.status_post(
            text, in_reply_to_id=reply_id, quoted_status_id=quote_id,
            idempotency_key=request.idempotency_key or None,
        ))
        return PostRef(id=str(status["id"]), url=str(status["url"] or status["uri"]),
                       extra={"truncated": True} if truncated else {})

    def delete(self, post_id: str) -> dict[str, Any]:
        status_id = self.status_id(post_id)
        status = self._guard("post lookup", lambda: self.api.status(status_id))
        if str((status.get("account") or {}).get("id", "")) != self.own_account_id():
            raise self.not_own("delete")
        self._guard("delete", lambda: self.api.status_delete(status_id))
        return {"deleted": True, "id": status_id}

    def like(self, post_id: str) -> dict[str, Any]:
        status_id = self.status_id(post_id)
        self._guard("like", lambda: self.api.status_favourite(status_id))
        return {"liked": True, "id": status_id}

    def profile(self) -> dict[str, Any]:
        account = self._guard("profile", self.api.account_verify_credentials)
        return {
            "platform": self.key, "id": str(account["id"]), "handle": account["acct"],
            "display_name": account.get("display_name") or "",
            "description": html_to_text(account.get("note")),
            "followers": account.get("followers_count", 0), "following": account.get("following_count", 0),
            "posts": account.get("statuses_count", 0), "url": account.get("url", ""),
        }

    def notifications(self, limit: int) -> list[Notification]:
        items = self._guard(
            "notifications", lambda: self.api.notifications(limit=limit, types=NOTIFICATION_TYPES)
        )
        result = []
        for item in list(items)[:limit]:
            status = item.get("status")
            kind = _KINDS.get(item["type"], "other")
            if kind == "mention" and status and status.get("in_reply_to_id"):
                kind = "reply"
            result.append(Notification(
                kind=kind,
                author=item["account"]["acct"],
                text=html_to_text(status["content"]) if status and kind in ("mention", "reply") else "",
                post_id=str(status["id"]) if status else None,
                url=(status.get("url") or status.get("uri")) if status else None,
                created_at=_iso(item.get("created_at")),
                private=bool(status) and status.get("visibility") == "direct",
            ))
        return result

    def metrics(self, post_id: str) -> dict[str, Any]:
        status_id = self.status_id(post_id)
        status = self._guard("metrics", lambda: self.api.status(status_id))
        return {
            "id": str(status["id"]), "url": status.get("url") or status.get("uri"),
            "likes": status.get("favourites_count", 0), "reposts": status.get("reblogs_count", 0),
            "replies": status.get("replies_count", 0),
        }
