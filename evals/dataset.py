"""The explainer's eval dataset: posts with the Bluesky posts they need, gold summaries, and the
scripted provider's recorded replies. Loaded into a fake AppView for offline runs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent.errors import ConfigError

DEFAULT_DATASET = Path(__file__).resolve().parent / "data" / "explain_dataset.json"
CATEGORIES = frozenset(
    {
        "compression",
        "slang_meme",
        "thread_dependent",
        "hallucination_trap",
        "tech_jargon",
        "tech_context",
        "ideology_debate",
        "ai_jargon",
        "ai_community",
    }
)


@dataclass
class EvalItem:
    id: str
    category: str
    target: str  # key of the post to explain
    posts: list[dict[str, Any]]  # {key, author, text, reply_to?, quote?, images?, link?, hidden?}
    gold_summary: str
    script: list[dict[str, Any]] = field(default_factory=list)
    live_url: str | None = None

    def post(self, key: str) -> dict[str, Any]:
        return next(p for p in self.posts if p["key"] == key)


def load_dataset(path: Path = DEFAULT_DATASET) -> list[EvalItem]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = [EvalItem(**raw) for raw in data["items"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read the eval dataset {path}: {exc}") from None
    for item in items:
        keys = [p["key"] for p in item.posts]
        if item.category not in CATEGORIES or item.target not in keys or len(set(keys)) != len(keys):
            raise ConfigError(f"{path}: item {item.id!r} has an unknown category, target or a repeated key")
        for post in item.posts:
            for ref in ("reply_to", "quote"):
                if ref in post and post[ref] not in keys[: keys.index(post["key"])]:
                    raise ConfigError(f"{path}: {item.id}/{post['key']}: {ref} must name an earlier post")
    return items


class AppView(Protocol):
    """What loading needs of the fake AppView (tests/support/fake_bsky.FakeBluesky)."""

    def add_account(self, handle: str, display_name: str = "", description: str = "") -> str: ...
    def add_post(
        self,
        did: str,
        text: str,
        reply: dict[str, Any] | None = None,
        embed: dict[str, Any] | None = None,
        created_at: str | None = None,
    ) -> str: ...
    def reply_to(self, parent: str) -> dict[str, Any]: ...
    def images(self, *alts: str) -> dict[str, Any]: ...
    def quote(self, uri: str, media: dict[str, Any] | None = None) -> dict[str, Any]: ...
    def link(self, url: str, title: str, description: str = "") -> dict[str, Any]: ...
    def hide_from_logged_out(self, did: str) -> None: ...


def web_url(handle: str, uri: str) -> str:
    return f"https://bsky.app/profile/{handle}/post/{uri.rsplit('/', 1)[1]}"


def load_into(appview: AppView, item: EvalItem) -> dict[str, str]:
    """Create the item's accounts and posts; {post key: bsky.app URL}."""
    dids: dict[str, str] = {}
    uris: dict[str, str] = {}
    urls: dict[str, str] = {}
    for post in item.posts:
        author = post["author"]
        if author not in dids:
            dids[author] = appview.add_account(author, author.split(".")[0].title())
        media = appview.images(*post["images"]) if post.get("images") else None
        if post.get("link"):
            media = appview.link(
                post["link"]["url"], post["link"]["title"], post["link"].get("description", "")
            )
        embed = appview.quote(uris[post["quote"]], media) if post.get("quote") else media
        reply = appview.reply_to(uris[post["reply_to"]]) if post.get("reply_to") else None
        uris[post["key"]] = appview.add_post(dids[author], post["text"], reply=reply, embed=embed)
        urls[post["key"]] = web_url(author, uris[post["key"]])
        if post.get("hidden"):
            appview.hide_from_logged_out(dids[author])
    return urls


def scripted_replies(item: EvalItem, urls: dict[str, str]) -> list[str]:
    """The item's recorded replies as JSON texts, with {url:KEY} replaced by the post's URL."""
    text = json.dumps(item.script, ensure_ascii=False)
    for key, url in urls.items():
        text = text.replace("{url:" + key + "}", url)
    return [json.dumps(reply, ensure_ascii=False) for reply in json.loads(text)]
