"""The names a lookup of a post's address sends to whoever answers for them: the handle of an
at:// URI or a bsky.app link (a DNS and web lookup on the handle's domain), a did:web's host, a
link's host (a Mastodon instance asked to resolve it fetches it) and a @user@instance's instance.
A did:plc goes to the PLC directory, which no one else reads, and is not one of them. In a search
query, the handle of a `from:`, `to:` or `mentions:` operator is one too."""

from __future__ import annotations

import re

_AT_URI = re.compile(r"at://([^/\s?#]+)", re.IGNORECASE)
_PROFILE = re.compile(r"(?:^|[/.])bsky\.app/profile/([^/\s?#]+)", re.IGNORECASE)
_LINK_HOST = re.compile(r"\b(?!at://)[a-z][a-z0-9+.-]*://(?:[^@/\s?#]*@)?([^/\s?#:]+)", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w@/])@([\w-]+(?:\.[\w-]+)*)(?:@([\w-]+(?:\.[\w-]+)+))?")
# A search's author operators: Bluesky resolves the handle of `from:` and `mentions:` (`to:` too)
_SEARCH_AUTHOR = re.compile(r"(?<![\w:])(?:from|to|mentions):@?([\w-]+(?:\.[\w-]+)+)", re.IGNORECASE)
_BSKY_APP = "bsky.app"


def _authority(name: str) -> str | None:
    """What a handle or DID names for a lookup: the handle, a did:web's host, nothing for a did:plc."""
    folded = name.casefold()
    if folded.startswith("did:web:"):
        return folded[len("did:web:"):].split(":", 1)[0] or None
    if folded.startswith("did:"):
        return None
    return folded.lstrip("@") or None


def resolved_names(text: str) -> list[str]:
    """Each name in `text` a lookup would be asked about, folded, once, in order."""
    found: list[str | None] = [_authority(a) for a in _AT_URI.findall(text) + _PROFILE.findall(text)]
    found += [host.casefold() for host in _LINK_HOST.findall(text) if host.casefold() != _BSKY_APP]
    found += [handle.casefold() for handle in _SEARCH_AUTHOR.findall(text)]
    for user, instance in _MENTION.findall(text):
        found.append(instance.casefold() if instance else (user.casefold() if "." in user else None))
    return list(dict.fromkeys(name for name in found if name))
