"""The shape every social platform client has. One module per platform beside this one.

Clients run inside the router only. They raise `SkillError` with the seed's error types
(auth_failed, rate_limited, request_failed, ...) and never put a credential or a raw API
body into a message. Text other people wrote is returned raw here; the skills pass it
through `protocol.untrusted` before it leaves the router.

Every request that may change something on the platform (`is_write`: any method but a read's, to any
path but a login's) asks `before_write` first, at the client's own transport, after the SDK's
login, token exchange or rate-limit wait: the command's last-moment check (`last_moment`, set per
command by `router.skills.social_common.on_platform`) stops it there when the owner's kill switch is
on by then. A write on a post (a delete) checks the post is the account's own before that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.platform_names import PLATFORM_NAMES
from router.errors import SkillError

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_write(method: str, path: str, login_paths: frozenset[str] = frozenset()) -> bool:
    """Whether a request may change something on the platform: every method but a read's, except
    to a login path (a session or a token changes nothing anyone sees)."""
    return method.upper() not in READ_METHODS and not any(path.endswith(login) for login in login_paths)


def no_check() -> None:
    """The last-moment check of a client outside any command's run (nothing to read)."""


@dataclass
class PostRequest:
    text: str
    url: str | None = None  # a link to attach (appended to the text where the platform has no card)
    reply_to: str | None = None  # post id or URL to reply to
    quote: str | None = None  # post id or URL to quote
    subreddit: str | None = None  # Reddit only
    title: str | None = None  # Reddit only
    idempotency_key: str = ""  # the command id: makes a retried post harmless where the platform allows
    # The owner approved these very words: published whole or not at all, never cut to fit.
    whole: bool = False


def refuse_cut(platform: str, whole: bool, cut: bool) -> None:
    """An approved text the platform would have to cut is not published: what the owner read is
    what goes out, or nothing does (a cut could drop the words that made it look harmless)."""
    if whole and cut:
        raise SkillError(
            "invalid_params",
            f"{platform} would have to cut this text to fit its length limit, and the owner approved "
            "it whole: nothing was published; send a shorter text for approval",
        )


@dataclass
class Notification:
    kind: str  # mention | reply | like | follow | repost | quote | other
    author: str  # handle or username of who did it
    text: str  # what they wrote, "" for likes and follows
    post_id: str | None
    url: str | None
    created_at: str  # ISO 8601
    private: bool = False  # a direct message: the owner's private data, wherever it appears

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PostRef:
    id: str
    url: str
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"truncated": true}

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, **self.extra}


class PlatformClient(ABC):
    """One social network, authenticated lazily with the credentials given at construction."""

    key: str = ""  # "bsky", "mastodon", "reddit", "x", "moltbook"
    required: tuple[str, ...] = ()  # credential variables that must be set

    def __init__(self, credentials: Mapping[str, str], env: Mapping[str, str], timeout: float = 20.0) -> None:
        missing = [name for name in self.required if not credentials.get(name)]
        if missing:
            raise SkillError(
                "no_credentials",
                f"{PLATFORM_NAMES.get(self.key, self.key)} has no credentials: set {', '.join(missing)} "
                "in router/.env",
            )
        self.credentials = credentials
        self.env = env
        self.timeout = timeout
        self.last_moment: Callable[[], None] = no_check  # the running command's (`before_write`)

    def before_write(self) -> None:
        """Right before a write request leaves: the running command's last-moment check, which
        raises SkillError (nothing sent) when the write must not go."""
        self.last_moment()

    def not_own(self, what: str) -> SkillError:
        """The refusal of a write on someone else's post, which the platform may allow (an account
        that moderates can delete others' posts). The author is not named: it is their words."""
        return SkillError("invalid_params", f"{PLATFORM_NAMES.get(self.key, self.key)} can only {what} this "
                          "account's own posts, and that post is someone else's; nothing was sent")

    def retime(self, timeout: float) -> None:
        """The next command's timeout, on a kept client (each client applies it to its session)."""
        self.timeout = timeout

    def close(self) -> None:  # noqa: B027 - a client without connections of its own has nothing to close
        """Close the connections the client holds (it is not kept any more)."""

    @abstractmethod
    def auth_test(self) -> dict[str, Any]:
        """Authenticate and return who we are, e.g. {"handle": ..., "id": ...}."""

    @abstractmethod
    def post(self, request: PostRequest) -> PostRef: ...

    @abstractmethod
    def delete(self, post_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def like(self, post_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def profile(self) -> dict[str, Any]: ...

    @abstractmethod
    def notifications(self, limit: int) -> list[Notification]: ...

    @abstractmethod
    def metrics(self, post_id: str) -> dict[str, Any]:
        """{"likes": n, "reposts": n, "replies": n, ...} where the platform has them."""
