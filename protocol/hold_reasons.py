"""Why a command waits for the owner: each reason the router's policy can give, typed, and the one
place that says it as a sentence a person would say.

The router decides (`router.policy.checks`, `router.policy.whose_words`) and stores both the typed
reason (`why` in the approval record and the owner notice) and its `sentence`; the console,
Telegram, the dashboard's approval card and the MCP reply all show that sentence, and name the
held command by who asked for it (`held_thing`): "your Bluesky post", "a Bluesky post an MCP
client asked for".
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from protocol.origin import AUTONOMY, MCP_VIA, OWNER, STRANGER, Origin

SHOWN_SOURCES = 4


class Why(StrEnum):
    """Every reason a command waits for the owner."""

    SCOPE = "scope"  # the owner set this kind of command to wait (ROUTER_REQUIRE_APPROVAL)
    OWNER_ONLY_DATA = "owner_only_data"  # it would publish what is the owner's only
    STRANGER_LINKS = "stranger_links"  # a stranger's reply links to someone neither side wrote
    OWNER_ASKED = "owner_asked"  # the owner asked to approve every public write of this path
    AUTONOMY_DELETE = "autonomy_delete"
    NO_ORIGIN = "no_origin"  # the command did not say who asked for it
    NOT_OWNER_WORDS = "not_owner_words"  # a turn that read outside text publishes unsaid words
    MAY_HIDE_SECRET = "may_hide_secret"  # a field carries a blob or a random-looking run


class Sender(StrEnum):
    """Who asked for the command, as the owner knows them."""

    OWNER = "owner"
    MCP = "mcp"
    AUTONOMY = "autonomy"
    STRANGER = "stranger"
    UNKNOWN = "unknown"  # the command came with no origin


# A published param, as a noun ("the link") and as what the owner would have done to give it.
FIELD_WORDS = {
    "text": ("the text", "write the text"),
    "title": ("the title", "write the title"),
    "url": ("the link", "give the link"),
    "reply_to": ("the post it replies to", "pick the post it replies to"),
    "quote": ("the post it quotes", "pick the post it quotes"),
    "post_id": ("the post it acts on", "pick which post"),
    "subreddit": ("the community", "name the community"),
    "submolt": ("the community", "name the community"),
    "query": ("the search words", "write the search words"),
}
# The paths an origin names (`Origin.via`), as the owner knows them.
PATH_WORDS = {
    "console": "the console", "telegram": "Telegram", "dashboard": "the dashboard",
    "cli": "the command line", "mcp": "an MCP client", "explain": "/explain",
    "mention": "a mention", "forward": "a forwarded message", "autonomy": "autonomy",
}


@dataclass(frozen=True)
class HoldReason:
    why: Why
    sender: Sender
    fields: tuple[str, ...] = ()  # the params whose words the owner did not give
    read: tuple[str, ...] = ()  # the outside sources the turn had read (the owner's turns only)
    holds: tuple[str, ...] = ()  # owner-only data found in the command
    author: str = ""  # the stranger whose turn it is
    links: tuple[str, ...] = ()  # links or handles neither the owner nor the stranger wrote
    via: str = ""  # the path the owner asked to approve every write of
    detail: str = ""  # what a suspect field holds (`protocol.suspicion`)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else str(v)
                for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> HoldReason | None:
        """The reason as stored, or None for anything that is not one."""
        if not isinstance(data, dict):
            return None
        try:
            values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
            for name, value in values.items():
                if isinstance(value, list):
                    values[name] = tuple(str(v) for v in value)
            return cls(**{**values, "why": Why(values["why"]), "sender": Sender(values["sender"])})
        except (KeyError, ValueError, TypeError):
            return None


def sender_of(origin: Origin | None) -> Sender:
    if origin is None:
        return Sender.UNKNOWN
    if origin.kind == STRANGER:
        return Sender.STRANGER
    if origin.kind == AUTONOMY:
        return Sender.AUTONOMY
    return Sender.MCP if origin.kind == OWNER and origin.via == MCP_VIA else Sender.OWNER


def field_noun(name: str) -> str:
    return FIELD_WORDS.get(name, (f"the {name.replace('_', ' ')}", ""))[0]


def field_giving(name: str) -> str:
    return FIELD_WORDS.get(name, ("", f"give the {name.replace('_', ' ')}"))[1]


def joined(items: list[str], word: str = "and") -> str:
    """"a", "a and b", "a, b and c" (with `word` "or": "a, b or c")."""
    items = list(dict.fromkeys(items))
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


def counted(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def asker(reason: HoldReason) -> str:
    """Who asked, as the subject of a sentence."""
    return {
        Sender.OWNER: "you",
        Sender.MCP: "an MCP client",
        Sender.AUTONOMY: "autonomy",
        Sender.STRANGER: f"a turn {reason.author or 'someone else'} wrote",
        Sender.UNKNOWN: "someone the command does not name",
    }[reason.sender]


def who_asked(reason: HoldReason) -> str:
    """The sentence that says who asked, and what they may have read; empty for the owner's own
    turn that read nothing."""
    if reason.sender == Sender.OWNER:
        if not reason.read:
            return ""
        shown = list(reason.read[-SHOWN_SOURCES:])
        more = len(reason.read) - len(shown)
        listed = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        sources = counted(len(reason.read), "outside source", "outside sources")
        return f"This turn had read {sources}: {listed}."
    if reason.sender == Sender.MCP:
        return "An MCP client asked for this, and SafeClaw cannot see what that client had read."
    if reason.sender == Sender.AUTONOMY:
        return "Autonomy asked for this on its own, after reading other people's posts."
    if reason.sender == Sender.STRANGER:
        return f"{capital(asker(reason))} asked for this."
    return "The command did not say who asked for it."


def because(reason: HoldReason) -> str:
    """What in the command makes it wait, as one sentence."""
    why = reason.why
    if why == Why.SCOPE:
        return "You asked for every command of this kind to wait for your approval."
    if why == Why.OWNER_ONLY_DATA:
        return f"It would publish what is yours only: {'; '.join(reason.holds[:3]) or 'your private data'}."
    if why == Why.STRANGER_LINKS:
        links = list(reason.links[:5]) or ["something"]
        them = f"you nor {reason.author}" if reason.author else "you nor they"
        it = "a link or handle" if len(links) == 1 else "links or handles"
        return f"Its words carry {it}, {joined(links)}, which neither {them} wrote."
    if why == Why.OWNER_ASKED:
        path = PATH_WORDS.get(reason.via, reason.via or "this path")
        return f"You asked to approve every public write that comes from {path}."
    if why == Why.AUTONOMY_DELETE:
        return (
            "Autonomy deletes a post only with your approval, because its orders come from other "
            "people's posts."
        )
    if why == Why.NO_ORIGIN:
        return "Its words may not be yours."
    if why == Why.NOT_OWNER_WORDS:
        giving = [field_giving(name) for name in reason.fields] or ["write its words"]
        return f"You did not {joined(giving, 'or')} yourself."
    what = field_noun(reason.fields[0]) if reason.fields else "the text"
    detail = reason.detail or "it looks encoded"
    return f"{capital(what)} may hide a secret: {detail}. Check it before it goes."


def sentence(reason: HoldReason) -> str:
    """Why the command waits, as the owner reads it: who asked, then what makes it wait."""
    return " ".join(part for part in (who_asked(reason), because(reason)) if part)


def held_thing(thing: str, sender: Sender | str | None, author: str = "") -> str:
    """A held command named by who asked for it: `thing` is what it is without an owner
    ("Bluesky post", "like on Mastodon"): "your Bluesky post", "a Bluesky post an MCP client asked
    for", "a like on Mastodon autonomy asked for"."""
    try:
        who = Sender(sender or Sender.OWNER)
    except ValueError:
        who = Sender.UNKNOWN
    if who in (Sender.OWNER, Sender.UNKNOWN):  # a command with no origin counts as the owner's
        return f"your {thing}"
    article = "an" if thing[:1].lower() in "aeiou" else "a"
    if who == Sender.STRANGER:
        return f"{article} {thing} asked for in a turn {author or 'someone else'} wrote"
    return f"{article} {thing} {asker(HoldReason(Why.SCOPE, who))} asked for"


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]
