"""Every form of a Bluesky post's address, checked before anything is read: a bsky.app URL with a
handle or a DID (http or https, www. or not, any case, with or without a trailing slash, query
or fragment, or without the scheme), or an at:// URI of a post record (a DID or a handle).

Anything else is refused with a message that says what is wrong, so no read is ever asked of the
router for it, and no host other than bsky.app is ever named to it."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from agent.explain.errors import ExplainError

MAX_ADDRESS_CHARS = 2000
POST_COLLECTION = "app.bsky.feed.post"
WEB_HOSTS = frozenset({"bsky.app", "www.bsky.app"})
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HANDLE = re.compile(rf"^(?:{_LABEL}\.)+[a-z](?:[a-z0-9-]{{0,61}}[a-z0-9])?$")
_DID_PLC = re.compile(r"^did:plc:[a-z2-7]{24}$")
_DID_WEB = re.compile(rf"^did:web:((?:{_LABEL}\.)+[a-z](?:[a-z0-9-]{{0,61}}[a-z0-9])?)$")
_RKEY = re.compile(r"^[A-Za-z0-9._:~-]{1,512}$")
# Top-level names that no Bluesky handle can have (atproto's handle rules).
_NO_HANDLE_TLDS = frozenset({"alt", "arpa", "example", "internal", "invalid", "local", "localhost", "onion"})
# Characters a chat app or a copy may leave around an address: spaces, zero-width marks, quotes,
# angle brackets (<https://…>), a closing parenthesis or full stop of the sentence around it.
_EDGE_JUNK = " \t\r\n\u200b\u200c\u200d\u2060\ufeff<>\"'`«»“”‘’"
HELP = (
    "give a post's address: https://bsky.app/profile/<handle or did>/post/<id> "
    "or at://<did or handle>/app.bsky.feed.post/<id>"
)


def _refuse(candidate: str, why: str) -> ExplainError:
    shown = candidate if len(candidate) <= 80 else candidate[:77] + "..."
    return ExplainError("malformed_url", f"{shown!r} is not a Bluesky post address: {why}; {HELP}")


def _actor(candidate: str, raw: str) -> str:
    """A handle (lower-cased) or a DID, checked; the account part of either address form."""
    actor = unquote(raw).strip().lower()
    if not actor:
        raise _refuse(candidate, "the account (handle or DID) is missing")
    if actor.startswith("did:"):
        if _DID_PLC.match(actor) or _DID_WEB.match(actor):
            return actor
        raise _refuse(
            candidate, "the DID is not a did:plc (24 letters and digits 2-7) or a did:web of a host name"
        )
    if len(actor) > 253 or not _HANDLE.match(actor):
        raise _refuse(candidate, f"{raw[:60]!r} is not a handle (like alice.bsky.social) or a DID")
    if actor.rsplit(".", 1)[1] in _NO_HANDLE_TLDS:
        raise _refuse(candidate, f"no Bluesky handle can end in .{actor.rsplit('.', 1)[1]}")
    return actor


def _rkey(candidate: str, raw: str | None) -> str:
    if not raw:
        raise _refuse(candidate, "the post's id (the part after /post/) is missing")
    if raw in (".", "..") or not _RKEY.match(raw):
        raise _refuse(candidate, "the post's id may only hold letters, digits and . _ : ~ - (at most 512)")
    return raw


def _web(candidate: str) -> str:
    text = candidate
    if re.match(r"^(?:www\.)?bsky\.app/", text, re.IGNORECASE):
        text = "https://" + text  # pasted without its scheme
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise _refuse(candidate, "it is not a valid web address") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        what = f"a {scheme}: address" if scheme else "not a web address"
        raise _refuse(candidate, f"it is {what}, not a bsky.app link")
    host = (parts.hostname or "").lower()
    if host not in WEB_HOSTS or parts.username is not None or port not in (None, 80, 443):
        where = host or "no host"
        raise _refuse(candidate, f"it points to {where}, not bsky.app; only Bluesky posts are read")
    segments = parts.path.split("/")[1:]
    if segments and segments[-1] == "":
        segments.pop()  # one trailing slash
    if len(segments) < 3 or segments[0].lower() != "profile":
        raise _refuse(candidate, "it is not a post's page (bsky.app/profile/<handle>/post/<id>)")
    if segments[2].lower() != "post":
        raise _refuse(candidate, f"it is a {segments[2][:20]!r} page of a profile, not a post")
    if len(segments) > 4:
        raise _refuse(candidate, "it has more after the post's id")
    actor = _actor(candidate, segments[1])
    rkey = _rkey(candidate, segments[3] if len(segments) == 4 else None)
    return f"https://bsky.app/profile/{actor}/post/{rkey}"


def _at(candidate: str) -> str:
    rest = re.split(r"[?#]", candidate[len("at://") :], maxsplit=1)[0]
    segments = rest.split("/")
    if segments and segments[-1] == "":
        segments.pop()
    if len(segments) < 2:
        raise _refuse(candidate, f"an at:// URI of a post names its collection, {POST_COLLECTION}")
    if segments[1] != POST_COLLECTION:
        raise _refuse(candidate, f"it names a {segments[1][:40]!r} record, not a post ({POST_COLLECTION})")
    if len(segments) > 3:
        raise _refuse(candidate, "it has more after the post's id")
    actor = _actor(candidate, segments[0])
    rkey = _rkey(candidate, segments[2] if len(segments) == 3 else None)
    return f"at://{actor}/{POST_COLLECTION}/{rkey}"


def post_address(text: str) -> str:
    """The canonical address of the post `text` names (a bsky.app URL or an at:// URI).

    Raises ExplainError(malformed_url), saying what is wrong, for anything else."""
    candidate = str(text).strip(_EDGE_JUNK).rstrip(".,;)!")
    if not candidate:
        raise _refuse(str(text).strip(), "it is empty")
    if len(candidate) > MAX_ADDRESS_CHARS:
        raise _refuse(candidate, f"it is {len(candidate)} characters long (at most {MAX_ADDRESS_CHARS})")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in candidate):
        raise _refuse(candidate, "it has spaces or control characters inside it")
    if candidate[:5].lower() == "at://":
        return _at(candidate)
    return _web(candidate)
