"""Every form of a Bluesky post's address, checked before anything is read: a bsky.app URL with a
handle or a DID, or an at:// URI of a post record."""

from __future__ import annotations

import re

from agent.explain.errors import ExplainError

_HANDLE = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DID = r"did:(?:plc:[a-z2-7]{24}|web:[a-zA-Z0-9.%:-]{1,253})"
_RKEY = r"[A-Za-z0-9._:~-]{1,512}"
_WEB = re.compile(rf"^https?://(?:www\.)?bsky\.app/profile/({_HANDLE}|{_DID})/post/({_RKEY})/?(?:[?#].*)?$")
_AT = re.compile(rf"^at://({_HANDLE}|{_DID})/app\.bsky\.feed\.post/({_RKEY})$")
HELP = (
    "give a post's address: https://bsky.app/profile/<handle or did>/post/<id> "
    "or at://<did>/app.bsky.feed.post/<id>"
)


def post_address(text: str) -> str:
    """The canonical address of the post `text` names (a bsky.app URL or an at:// URI).

    Raises ExplainError(malformed_url) for anything else, before the router is asked."""
    candidate = text.strip()
    web = _WEB.match(candidate)
    if web:
        return f"https://bsky.app/profile/{web.group(1)}/post/{web.group(2)}"
    at = _AT.match(candidate)
    if at:
        return candidate
    shown = candidate if len(candidate) <= 80 else candidate[:77] + "..."
    raise ExplainError("malformed_url", f"{shown!r} is not a Bluesky post address; {HELP}")
