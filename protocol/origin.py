"""Whose words a command carries: its origin and its taint, in the command envelope.

The agent's loop code (never the model) states, for each router command, who wrote the turn
that asked for it and what outside text that turn had read before it; the router decides on
that together with the command's effect (`router.policy.whose_words`).

- `kind` is who wrote the turn: `owner` (the console, Telegram, a slash command, /explain, the
  router's own one-shot tool), `stranger` (a Bluesky mention, a forwarded message) or
  `autonomy` (a cycle on the owner's standing rules, fed by other people's posts).
- `via` names the path for the audit log and the owner: console, telegram, dashboard, cli, mcp,
  explain, mention, forward, autonomy.
- A stranger's turn names that person (`author`), the platform and the post it answers
  (`platform`, `post`) and what they wrote (`author_words`): the only post it may reply to, and
  the only words besides the owner's that its reply may link to or mention.
- `taint` lists the outside sources the turn had read before the command (a page, a fetched or
  searched post, a feed, notifications, a message someone else wrote). Empty: none.
- `owner_words` are the owner's own messages the turn's prompt shows: a tainted owner turn may
  publish without approval only what these already say.
- `hold_writes`: the owner asked for every public write of this path to be approved
  (`channels.autonomy.approve_public_writes`).
- `holds`: the owner-only data the agent's flow check found in the command's params that the
  owner did not send there in their own words (`agent.flow.sinks`): a write waits for the owner,
  a read from a tainted turn is refused. The agent can only add restrictions with it.
- `answers`: the mentions this turn read (`platform post`, never a direct message) that the
  owner's message of this turn (the last of `owner_words`) asked to answer: a reply to one of them
  needs no approval when nothing else in it came from outside (`protocol.mention_replies`).

An envelope without an origin counts as an owner turn that read something unknown: tainted.
What an envelope states is checked against the login that queued it (`router.queue.senders`): the
MCP server's login may send only its own origin, the agent's any but another login's path.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from protocol import link_hosts

OWNER = "owner"
STRANGER = "stranger"
AUTONOMY = "autonomy"
KINDS = (OWNER, STRANGER, AUTONOMY)
NO_ORIGIN = "no origin was sent with the command (counted as outside text)"
MCP_VIA = "mcp"  # the path of an MCP client's commands (the router's MCP server)

MAX_SOURCES = 64
MAX_SOURCE_CHARS = 300
MAX_WORDS = 40
MAX_WORD_CHARS = 8000
MAX_LABEL_CHARS = 300
MAX_HOLDS = 8
MAX_ANSWERS = 100
_VIA = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # a label is one line


class OriginError(ValueError):
    """An origin on the wire that is not one (wrong type, unknown kind, too long)."""


@dataclass(frozen=True)
class Origin:
    kind: str
    via: str
    author: str = ""
    platform: str = ""
    post: str = ""
    taint: tuple[str, ...] = ()
    owner_words: tuple[str, ...] = ()
    author_words: tuple[str, ...] = ()
    hold_writes: bool = False
    holds: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise OriginError(f"origin kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not isinstance(self.via, str) or not _VIA.fullmatch(self.via):
            raise OriginError("origin via must be 1-32 lowercase letters, digits, '_' or '-'")
        for name in ("author", "platform", "post"):
            value = getattr(self, name)
            if not isinstance(value, str) or len(value) > MAX_LABEL_CHARS or _CONTROL.search(value):
                raise OriginError(f"origin {name} must be a line of at most {MAX_LABEL_CHARS} characters")
        _lines("taint", self.taint, MAX_SOURCES, MAX_SOURCE_CHARS)
        if any(_CONTROL.search(source) for source in self.taint):
            raise OriginError("origin taint must be lines (a source is shown to the owner as one line)")
        _lines("owner_words", self.owner_words, MAX_WORDS, MAX_WORD_CHARS)
        _lines("author_words", self.author_words, MAX_WORDS, MAX_WORD_CHARS)
        _lines("holds", self.holds, MAX_HOLDS, MAX_SOURCE_CHARS)
        _lines("answers", self.answers, MAX_ANSWERS, MAX_SOURCE_CHARS)
        if any(_CONTROL.search(entry) for entry in self.answers):
            raise OriginError("origin answers must be lines (a platform and a post each)")
        if not isinstance(self.hold_writes, bool):
            raise OriginError("origin hold_writes must be true or false")

    @property
    def tainted(self) -> bool:
        return bool(self.taint) or self.kind != OWNER

    def with_holds(self, holds: Iterable[str]) -> Origin:
        """The same origin, with more owner-only data found in its command (`holds`)."""
        found = tuple(dict.fromkeys([*self.holds, *(clip(h, MAX_SOURCE_CHARS) for h in holds)]))
        return _replace(self, holds=found[:MAX_HOLDS])

    def with_answers(self, answers: Iterable[str]) -> Origin:
        """The same origin, with the mentions the owner's message of this turn asked to answer."""
        return _replace(self, answers=tuple(dict.fromkeys(answers))[:MAX_ANSWERS])

    def with_reading(self, sources: Iterable[str]) -> Origin:
        """The same origin after the turn read more outside text."""
        taint = tuple(dict.fromkeys([*self.taint, *(clip(s, MAX_SOURCE_CHARS) for s in sources)]))
        return _replace(self, taint=taint[-MAX_SOURCES:])

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "via": self.via, "author": self.author, "platform": self.platform,
            "post": self.post, "taint": list(self.taint), "owner_words": list(self.owner_words),
            "author_words": list(self.author_words), "hold_writes": self.hold_writes,
            **({"holds": list(self.holds)} if self.holds else {}),
            **({"answers": list(self.answers)} if self.answers else {}),
        }

    def summary(self) -> dict[str, Any]:
        """What the audit log and the owner see: who, by which path, what the turn had read."""
        shown: dict[str, Any] = {"kind": self.kind, "via": self.via, "taint": list(self.taint)}
        if self.author:
            shown["author"] = self.author
        if self.post:
            shown["post"] = self.post
        if self.holds:
            shown["holds"] = list(self.holds)
        if self.answers:
            shown["answers"] = len(self.answers)  # the mentions the owner asked to answer
        return shown

    @classmethod
    def from_dict(cls, data: Any) -> Origin:
        if not isinstance(data, Mapping):
            raise OriginError("origin must be a JSON object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise OriginError(f"origin has unknown field(s): {', '.join(map(str, unknown))[:100]}")
        try:
            return cls(
                kind=data["kind"],
                via=data["via"],
                author=data.get("author", ""),
                platform=data.get("platform", ""),
                post=data.get("post", ""),
                taint=_tuple(data.get("taint", ())),
                owner_words=_tuple(data.get("owner_words", ())),
                author_words=_tuple(data.get("author_words", ())),
                hold_writes=data.get("hold_writes", False),
                holds=_tuple(data.get("holds", ())),
                answers=_tuple(data.get("answers", ())),
            )
        except KeyError as exc:
            raise OriginError(f"origin needs {exc.args[0]!r}") from None


def owner(via: str, owner_words: Iterable[str] = (), taint: Iterable[str] = ()) -> Origin:
    return Origin(OWNER, via, owner_words=bounded_words(owner_words), taint=tuple(taint))


def _tuple(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise OriginError("origin lists must be JSON lists of strings")
    return tuple(value)


def _lines(name: str, values: Any, most: int, chars: int) -> None:
    if not isinstance(values, tuple) or len(values) > most:
        raise OriginError(f"origin {name} must be a list of at most {most} strings")
    if not all(isinstance(v, str) and len(v) <= chars for v in values):
        raise OriginError(f"origin {name} must hold strings of at most {chars} characters")


def _replace(origin: Origin, **changes: Any) -> Origin:
    return Origin(**{**origin.__dict__, **changes})


def clip(text: str, limit: int) -> str:
    text = _CONTROL.sub(" ", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded_words(messages: Iterable[str]) -> tuple[str, ...]:
    """The newest messages that fit the wire's bounds, oldest first."""
    kept = [m[:MAX_WORD_CHARS] for m in messages if isinstance(m, str) and m.strip()]
    return tuple(kept[-MAX_WORDS:])


# -- did these words come from that person? --------------------------------------------------
_WORD = re.compile(r"\w+")
# A link or a handle: what a reply can send a reader to, or whom it can call in.
_LINK = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+"  # a URL with a scheme, or www.
    r"|(?<![\w@])@[\w.-]+(?:@[\w.-]+)?"  # @handle, @user@instance
    r"|\b(?:[a-z0-9-]+\.)+(?:[a-z]{2,24})(?:/\S*)?",  # example.com, bsky.app/profile/x
    re.IGNORECASE,
)
_TRAILING = ".,;:!?)]}'\"»”’"


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def links_and_handles(text: str) -> list[str]:
    """Every URL, domain and @handle in the text, folded, without trailing punctuation."""
    folded = fold(text)
    found: list[str] = []
    if "." not in folded and "@" not in folded and "://" not in folded:
        return found  # every alternative of `_LINK` needs one of them
    for match in _LINK.finditer(folded):
        value = match.group(0).rstrip(_TRAILING)
        if value and value not in found:
            found.append(value)
    return found


def said_by(value: str, messages: Iterable[str]) -> bool:
    """True when `value` is already in one of the messages: its words, in order and next to each
    other, each of its links and handles as written, and its emoji, symbols and invisible
    characters (`_beyond_words`). Empty words say nothing: False."""
    wanted, messages = cased_words(value), tuple(messages)
    if not wanted or not messages:
        return False
    links = links_and_handles(value)
    extra, marks = Counter(_beyond_words(value)), Counter(_marks(value))
    for message in messages:
        same_words = _contains(cased_words(message), wanted) and all(link in fold(message) for link in links)
        added_marks = sum((marks - Counter(_marks(message))).values())
        if same_words and not extra - Counter(_beyond_words(message)) and added_marks <= FREE_MARKS:
            return True
    return False


def cased_words(text: str) -> list[str]:
    """The words of a text as written (NFKC, case kept): the case of a word the owner wrote is part
    of it, or the capitals of "we ship small things" could spell a PIN."""
    return _WORD.findall(unicodedata.normalize("NFKC", text))


_PUNCTUATION_MARK = re.compile(r"[!-/:-@\[-`{-~]")  # string.punctuation: the ASCII marks
# Neither a word character, a space nor plain punctuation (on every code point, the same test as
# `str.isspace`, `string.punctuation` and `\w` make it character by character).
_BEYOND_WORDS = re.compile(r"[^\w\s!-/:-@\[-`{-~]")
FREE_MARKS = 2  # punctuation a write may add to the owner's words: "Hello, world!" for "hello world"
_SPACE_RUN = re.compile(r"[ \n]{2,}|[^\S \n]")


def _beyond_words(text: str) -> list[str]:
    """What a text holds besides its words, single spaces and plain punctuation: emoji, symbols,
    invisible characters, spaces of other widths and runs of spaces, which a write may carry only as
    the owner wrote them (coloured squares, tag characters or the widths of the spaces after the
    owner's "hello" could spell anything)."""
    odd = _BEYOND_WORDS.findall(fold(text))
    return odd + [f"space run {m.group()!r}" for m in _SPACE_RUN.finditer(text)]  # before NFKC folds them


def _marks(text: str) -> list[str]:
    return _PUNCTUATION_MARK.findall(text)


def _contains(words: list[str], wanted: list[str]) -> bool:
    """Whether `wanted` is a run of `words`: each word as written, but the first may differ in the
    case of its first letter (a sentence's capital)."""
    size = len(wanted)
    heads = {wanted[0], wanted[0][:1].swapcase() + wanted[0][1:]}
    starts = range(len(words) - size + 1)
    return any(words[i] in heads and words[i + 1 : i + size] == wanted[1:] for i in starts)


def foreign_links(text: str, messages: Iterable[str]) -> list[str]:
    """The hosts and handles of `text` that none of the messages names, read the way a reader
    takes them in and compared as whole hosts (`protocol.link_hosts`)."""
    return link_hosts.foreign_hosts(text, messages)
