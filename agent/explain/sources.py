"""The posts read in one run, numbered in the order they were first seen: the only things a
bullet may cite. Their text came from outside: it reaches a prompt sanitised, with any sentence
aimed at AI models withheld (steering.py), and fenced. A source's URL is its bsky.app page,
rebuilt from its at:// id, so a link never names another host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.explain.address import POST_COLLECTION, post_address
from agent.explain.errors import ExplainError
from agent.explain.steering import withhold
from protocol.untrusted import fence, sanitise_text

EXCERPT_CHARS = 500


@dataclass
class Source:
    number: int
    id: str  # the post's at:// URI
    url: str
    author: str
    text: str  # sanitised

    def to_json(self) -> dict[str, Any]:
        return {"n": self.number, "url": self.url, "author": self.author, "text": self.text}


def describe(post: dict[str, Any]) -> str:
    """A post's text with what a reader sees beside it: image alt texts and a link card."""
    parts = [str(post.get("text") or "")]
    for image in post.get("images") or []:
        if image.get("alt"):
            parts.append(f"[image: {image['alt']}]")
    link = post.get("link")
    if isinstance(link, dict) and link.get("url"):
        parts.append(f"[link: {link.get('title') or ''} {link['url']}]")
    return " ".join(p for p in parts if p).strip()


def outside(text: str, max_chars: int) -> str:
    """Outside text as a prompt may show it: steering withheld, sanitised, cut to `max_chars`."""
    return sanitise_text(withhold(text), max_chars).text


def web_url(post_id: str, given: str = "") -> str:
    """The bsky.app page of an at:// post id ("" for anything else): `given` (the router's URL,
    with the author's handle) when it is that post's page, else one built from the id."""
    parts = post_id.removeprefix("at://").split("/")
    if not post_id.startswith("at://") or len(parts) != 3 or parts[1] != POST_COLLECTION:
        return ""
    try:
        canonical = post_address(given) if given else ""
    except ExplainError:
        canonical = ""
    if canonical.startswith("https://bsky.app/profile/") and canonical.endswith(f"/post/{parts[2]}"):
        return canonical
    try:
        return post_address(f"https://bsky.app/profile/{parts[0]}/post/{parts[2]}")
    except ExplainError:
        return ""


class SourceBook:
    def __init__(self) -> None:
        self._by_id: dict[str, Source] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, number: object) -> bool:
        return any(s.number == number for s in self._by_id.values())

    def add(self, post: dict[str, Any]) -> int | None:
        """Number a readable post (the same post keeps its number); None for an unavailable one."""
        raw_id = str(post.get("id") or "")
        url = web_url(raw_id, str(post.get("url") or ""))
        if not url or post.get("unavailable"):
            return None
        post_id = post_address(raw_id)  # one key per post, however its id was spelled
        if post_id not in self._by_id:
            self._by_id[post_id] = Source(
                len(self._by_id) + 1,
                post_id,
                url,
                outside(str(post.get("author") or ""), 100),
                outside(describe(post), EXCERPT_CHARS),
            )
        return self._by_id[post_id].number

    def get(self, number: int) -> Source | None:
        return next((s for s in self._by_id.values() if s.number == number), None)

    def all(self) -> list[Source]:
        return sorted(self._by_id.values(), key=lambda s: s.number)

    def fenced(self) -> str:
        """Every source as one block of outside data, each line `[N] @author: text`."""
        if not self._by_id:
            return "(no sources read yet)"
        lines = [f"[{s.number}] @{s.author}: {s.text}" for s in self.all()]
        return fence("bluesky_sources", "\n".join(lines))
