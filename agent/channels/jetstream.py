"""Jetstream's wire: the subscribe URL and the events it sends, read defensively.

Jetstream (github.com/bluesky-social/jetstream) turns the atproto firehose into JSON over a
WebSocket. Query parameters used here: `wantedCollections` (NSIDs; account and identity events
come regardless), `cursor` (unix microseconds: replay from that time) and
`maxMessageSizeBytes` (the server drops bigger events, so none exceeds the client's `max_size`).
Each event is `{"did", "time_us", "kind": "commit" | "identity" | "account", ...}`; a commit
carries `{"operation": "create" | "update" | "delete", "collection", "rkey", "record", "cid"}`.

Everything here comes from strangers: any field may be missing, of another type, or huge.
`read_event` either returns what the listener needs or raises `MalformedEvent`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

JETSTREAM_URL_VARIABLE = "BSKY_JETSTREAM_URL"
DEFAULT_JETSTREAM_URL = "wss://jetstream2.us-east.bsky.network/subscribe"
POST_COLLECTION = "app.bsky.feed.post"
MENTION_FEATURE = "app.bsky.richtext.facet#mention"
MAX_EVENT_BYTES = 1_000_000  # below the websockets client's 1 MiB max_size
MAX_POST_TEXT = 3000  # the post lexicon allows 3000 bytes (300 graphemes); more is not a post
# An event stamped further ahead of now than clock skew explains is malformed: taken as the
# cursor, it would make the listener skip every real post from then on, across restarts.
MAX_AHEAD_US = 10 * 60 * 1_000_000
MAX_FACETS = 500  # a post with more rich-text facets than this is not a real post

# The head Jetstream writes first: `{"did":"…","time_us":…,`. No quote or backslash inside the DID,
# so the match cannot start inside a nested string. Anything else takes the full parse.
_EVENT_HEAD = re.compile(r'\{\s*"did"\s*:\s*"[^"\\]{1,2100}"\s*,\s*"time_us"\s*:\s*([1-9][0-9]{0,18})\s*[,}]')
DID_PATTERN = re.compile(r"did:[a-z]+:[A-Za-z0-9._:%-]{1,2000}")
RECORD_KEY_PATTERN = re.compile(r"[A-Za-z0-9._:~-]{1,512}")


class MalformedEvent(ValueError):
    """An event that is not what Jetstream sends. `time_us` is set when at least that was readable."""

    def __init__(self, reason: str, time_us: int | None = None) -> None:
        super().__init__(reason)
        self.time_us = time_us


@dataclass(frozen=True)
class Post:
    """A post someone just created, reduced to what decides whether the owner is addressed."""

    author: str  # the author's DID
    rkey: str  # record key: the post's id within the author's repository
    text: str
    mentions: frozenset[str]  # DIDs of the mention facets
    reply_parent: str | None  # at:// URI of the post it answers, if it is a reply

    @property
    def uri(self) -> str:
        return f"at://{self.author}/{POST_COLLECTION}/{self.rkey}"

    def addresses(self, watched: frozenset[str]) -> bool:
        """Mentions a watched DID or replies to a watched DID's post, and is not by one of them."""
        if self.author in watched:
            return False
        if self.mentions & watched:
            return True
        parent = self.reply_parent or ""
        return any(parent.startswith(f"at://{did}/") for did in watched)


@dataclass(frozen=True)
class Event:
    time_us: int
    post: Post | None  # None: an event the listener has no use for (delete, identity, a like…)


class PostFilter:
    """Events in, posts for the watched accounts out, at firehose speed.

    A post that addresses a watched account holds its DID (in a mention facet or the reply's
    parent URI), so an event whose text holds none of the watched DIDs is not parsed: only its
    head is read for `time_us`. The rest take the full, defensive parse (`read_event`).
    (Jetstream's Go encoder never writes a DID's letters as \\u escapes.)"""

    def __init__(self, watch: frozenset[str], now_us: Callable[[], int] | None = None) -> None:
        self.watch = watch
        self._needles = tuple(sorted(watch))
        self.now_us = now_us or wall_clock_us

    def read(self, raw: str | bytes) -> Event:
        """The event, with `post` set only for a post that addresses a watched account."""
        if isinstance(raw, str) and len(raw) <= MAX_EVENT_BYTES:
            head = _EVENT_HEAD.match(raw)
            if head is not None and not any(needle in raw for needle in self._needles):
                return Event(checked_time(int(head.group(1)), self.now_us()), None)
        event = read_event(raw, self.now_us())
        if event.post is not None and not event.post.addresses(self.watch):
            return Event(event.time_us, None)
        return event


def subscribe_url(base: str, cursor: int | None) -> str:
    """`base` with the query this listener needs; other parameters of `base` are kept."""
    parts = urlsplit(base)
    names = {"wantedCollections", "cursor", "maxMessageSizeBytes"}
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in names]
    query += [("wantedCollections", POST_COLLECTION), ("maxMessageSizeBytes", str(MAX_EVENT_BYTES))]
    if cursor is not None:
        query.append(("cursor", str(cursor)))
    return urlunsplit(parts._replace(query=urlencode(query)))


def is_did(value: object) -> bool:
    return isinstance(value, str) and DID_PATTERN.fullmatch(value) is not None


def wall_clock_us() -> int:
    return time.time_ns() // 1000


def is_ahead(time_us: int, now_us: int) -> bool:
    """True for a time further ahead of now than clock skew explains."""
    return time_us > now_us + MAX_AHEAD_US


def checked_time(time_us: int, now_us: int) -> int:
    if is_ahead(time_us, now_us):
        raise MalformedEvent(f"time_us {time_us} is ahead of now; not taken as a cursor")
    return time_us


def read_event(raw: str | bytes, now_us: int | None = None) -> Event:
    """Parse one WebSocket message. Raises MalformedEvent saying what is wrong with it."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedEvent("a binary message that is not UTF-8 JSON") from None
    if len(raw) > MAX_EVENT_BYTES:
        raise MalformedEvent(f"{len(raw)} characters, more than {MAX_EVENT_BYTES}")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise MalformedEvent("not JSON") from None
    if not isinstance(data, dict):
        raise MalformedEvent("not a JSON object")
    time_us = data.get("time_us")
    if isinstance(time_us, bool) or not isinstance(time_us, int) or time_us <= 0:
        raise MalformedEvent("no positive integer time_us")
    checked_time(time_us, wall_clock_us() if now_us is None else now_us)
    try:
        return Event(time_us, created_post(data))
    except MalformedEvent as exc:
        raise MalformedEvent(str(exc), time_us) from None


def created_post(data: dict[str, Any]) -> Post | None:
    """The post a commit event creates; None for any other event."""
    commit = data.get("commit")
    if data.get("kind") != "commit":
        return None
    if not isinstance(commit, dict):
        raise MalformedEvent("a commit event without a commit object")
    if commit.get("operation") != "create" or commit.get("collection") != POST_COLLECTION:
        return None
    author, rkey, record = data.get("did"), commit.get("rkey"), commit.get("record")
    if not is_did(author):
        raise MalformedEvent("a post whose author is not a DID")
    if not isinstance(rkey, str) or RECORD_KEY_PATTERN.fullmatch(rkey) is None:
        raise MalformedEvent("a post without a valid record key")
    if not isinstance(record, dict):
        raise MalformedEvent("a post without a record")
    text = record.get("text")
    if not isinstance(text, str):
        raise MalformedEvent("a post without text")
    if len(text) > MAX_POST_TEXT:
        raise MalformedEvent(f"a post text of {len(text)} characters, more than a post may hold")
    assert isinstance(author, str)
    mentions, parent = mentioned_dids(record.get("facets")), reply_parent_uri(record.get("reply"))
    return Post(author, rkey, text, mentions, parent)


def mentioned_dids(facets: object) -> frozenset[str]:
    """DIDs of the well-formed mention features; anything else in the facets is ignored."""
    if facets is None:
        return frozenset()
    if not isinstance(facets, list) or len(facets) > MAX_FACETS:
        raise MalformedEvent("facets that are not a list of a sane length")
    dids = set()
    for facet in facets:
        features = facet.get("features") if isinstance(facet, dict) else None
        for feature in features if isinstance(features, list) else []:
            if isinstance(feature, dict) and feature.get("$type") == MENTION_FEATURE:
                did = feature.get("did")
                if is_did(did):
                    dids.add(str(did))
    return frozenset(dids)


def reply_parent_uri(reply: object) -> str | None:
    if reply is None:
        return None
    parent = reply.get("parent") if isinstance(reply, dict) else None
    uri = parent.get("uri") if isinstance(parent, dict) else None
    if not isinstance(uri, str) or not uri.startswith("at://") or len(uri) > 3000:
        raise MalformedEvent("a reply without a valid parent URI")
    return uri
