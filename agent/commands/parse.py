"""Reading a slash command: `/post bsky hello` → the Action the model would have written.

Each command that acts builds the same `Action` objects the loop runs for the model, checked
against the same schemas (`parse_action`), so a command is never a way around validation, the
router's policy, its dry run, its audit log or the owner's approvals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent.errors import AgentError, ToolCodeError
from agent.mind.tool_code import Action, parse_action

PLATFORMS = ("bsky", "mastodon", "moltbook", "reddit", "x")
PLATFORM_ALIASES = {"bluesky": "bsky", "twitter": "x", "mstdn": "mastodon", **{p: p for p in PLATFORMS}}
# The first word of a command; Telegram may add "@botname" in groups.
COMMAND_WORD = re.compile(r"^/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?$")
MASTODON_STATUS_PATH = re.compile(r"^/@[^/]+/\d+/?$")
# "example.com" or "news.example.org/page": an address typed without its scheme.
BARE_HOST = re.compile(
    r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}(?::\d{1,5})?(?:[/?#]\S*)?$", re.I)
# Where SEARCH_POSTS looks; a leading platform word is where, not what.
SEARCH_PLATFORM = "bsky"


class CommandUsageError(AgentError):
    """A command the owner wrote that cannot run as written; the message says what was expected."""


@dataclass(frozen=True)
class CommandSpec:
    name: str
    args: str  # what follows the name, as the usage line shows it
    summary: str
    # The actions it runs (from its argument text); None for the commands that only show or clear.
    build: Callable[[str], list[Action]] | None = None

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.args}".rstrip()


def split_command(text: str) -> tuple[str, str] | None:
    """(name, argument text) when `text` is a slash command, else None (a message for the model)."""
    stripped = text.strip()
    first, _, rest = stripped.partition(" ")
    if "\n" in first:
        first, _, more = first.partition("\n")
        rest = more + " " + rest
    match = COMMAND_WORD.match(first)
    if not match:
        return None
    return match.group(1).lower(), rest.strip()


def platform_name(word: str) -> str | None:
    return PLATFORM_ALIASES.get(word.strip().lower())


def platform_of_post(ref: str) -> str | None:
    """The platform a post URL (or at:// URI) belongs to, when it can be told from the address."""
    if ref.startswith("at://"):
        return "bsky"
    parts = urlsplit(ref)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().removeprefix("www.").removeprefix("mobile.")
    if host == "bsky.app" or host.endswith(".bsky.app"):
        return "bsky"
    if host in ("x.com", "twitter.com"):
        return "x"
    if host in ("reddit.com", "old.reddit.com", "redd.it") or host.endswith(".reddit.com"):
        return "reddit"
    if host == "moltbook.com":
        return "moltbook"
    if MASTODON_STATUS_PATH.match(parts.path):  # https://<any instance>/@user/<id>
        return "mastodon"
    return None


def post_target(args: str, usage: str) -> tuple[str, str, str]:
    """(platform, post reference, what follows) from `[platform] <url or id> [rest]`."""
    words = args.split(maxsplit=1)
    if not words:
        raise CommandUsageError(f"Usage: {usage}")
    explicit = platform_name(words[0])
    if explicit:
        words = words[1].split(maxsplit=1) if len(words) > 1 else []
        if not words:
            raise CommandUsageError(f"Usage: {usage} (the post's URL or id is missing)")
    ref, rest = words[0], (words[1] if len(words) > 1 else "")
    platform = explicit or platform_of_post(ref)
    if platform is None:
        raise CommandUsageError(
            f"I cannot tell the platform from {ref!r}. Name it first, e.g. /{usage.split()[0][1:]} "
            f"mastodon {ref} … (platforms: {', '.join(PLATFORMS)})"
        )
    return platform, ref, rest.strip()


# The pairs of quote marks a text may be typed in; one pair around the whole text is not part of it.
QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”", "„": "“", "‘": "’", "«": "»", "»": "«", "「": "」"}


def unquoted(text: str) -> str:
    """`text` without one pair of matching quote marks around the whole of it (`"Testing"` is
    the text Testing, as the model's reading of "post \"Testing\"" takes it); kept as it is when
    the marks do not close around it all (`"Testing" she said`)."""
    text = text.strip()
    if len(text) < 3 or QUOTE_PAIRS.get(text[0]) != text[-1]:
        return text
    inner = text[1:-1]
    if text[0] in inner or text[-1] in inner:
        return text  # a mark closes inside: two quoted parts, not one
    return inner.strip() or text


def checked(name: str, params: dict[str, Any], usage: str, schemas: dict[str, dict[str, Any]]) -> Action:
    """The action, validated by the parser the model's actions go through."""
    try:
        return parse_action({"name": name, "params": params}, 0, schemas)
    except ToolCodeError as exc:
        detail = str(exc).removeprefix("action 1 ")
        raise CommandUsageError(f"That does not fit {name}: {detail}. Usage: {usage}") from None


def platform_argument(word: str, usage: str) -> str:
    platform = platform_name(word)
    if platform is None:
        raise CommandUsageError(
            f"{word!r} is not a platform I know; use one of {', '.join(PLATFORMS)}. Usage: {usage}"
        )
    return platform


class CommandBuilders:
    """The `build` functions of the acting commands, bound to the schemas they are checked against."""

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self.schemas = schemas

    def _one(self, name: str, params: dict[str, Any], usage: str) -> list[Action]:
        return [checked(name, params, usage, self.schemas)]

    def post(self, args: str) -> list[Action]:
        usage = "/post <platform> <text>"
        platform_word, _, text = args.partition(" ")
        if not platform_word or not text.strip():
            raise CommandUsageError(f"Usage: {usage} (platforms: {', '.join(PLATFORMS)})")
        platform = platform_argument(platform_word, usage)
        return self._one("CREATE_POST", {"platform": platform, "text": unquoted(text)}, usage)

    def reply(self, args: str) -> list[Action]:
        usage = "/reply [platform] <post URL> <text>"
        platform, ref, text = post_target(args, usage)
        if not text:
            raise CommandUsageError(f"Usage: {usage} (the text of the reply is missing)")
        params = {"platform": platform, "text": unquoted(text), "reply_to": ref}
        return self._one("CREATE_POST", params, usage)

    def _on_post(self, action: str, command: str, args: str) -> list[Action]:
        usage = f"/{command} [platform] <post URL>"
        platform, ref, rest = post_target(args, usage)
        if rest:
            raise CommandUsageError(f"Usage: {usage} (only one post at a time; unexpected {rest!r})")
        return self._one(action, {"platform": platform, "post_id": ref}, usage)

    def like(self, args: str) -> list[Action]:
        return self._on_post("LIKE_POST", "like", args)

    def delete(self, args: str) -> list[Action]:
        return self._on_post("DELETE_POST", "delete", args)

    def notifications(self, args: str) -> list[Action]:
        usage = "/notifications <platform>"
        words = args.split()
        if len(words) != 1:
            raise CommandUsageError(f"Usage: {usage} (platforms: {', '.join(PLATFORMS)})")
        return self._one("GET_NOTIFICATIONS", {"platform": platform_argument(words[0], usage)}, usage)

    def remember(self, args: str) -> list[Action]:
        usage = "/remember <key> = <value>"
        key, equals, value = args.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise CommandUsageError(f"Usage: {usage}, e.g. /remember favourite colour = green")
        return self._one("_MEMORY_WRITE", {"new_memory": {key.strip(): value.strip()}}, usage)

    def forget(self, args: str) -> list[Action]:
        usage = "/forget <key>"
        if not args.strip():
            raise CommandUsageError(f"Usage: {usage} (/memory lists the keys)")
        return self._one("_MEMORY_FORGET", {"keys": [args.strip()]}, usage)

    def browse(self, args: str) -> list[Action]:
        usage = "/browse <url>"
        words = args.split()
        url = with_scheme(words[0]) if len(words) == 1 else ""
        if urlsplit(url).scheme not in ("http", "https"):
            raise CommandUsageError(f"Usage: {usage} (one web address, such as example.com or https://example.com)")
        return self._one("_BROWSER_VISION", {"url": url}, usage)

    def search(self, args: str) -> list[Action]:
        usage = "/search <words>"
        first, _, rest = args.strip().partition(" ")
        platform = platform_name(first) if rest.strip() and first.lower() != "x" else None  # "x files"
        if platform is not None and platform != SEARCH_PLATFORM:
            raise CommandUsageError(f"Only public Bluesky posts can be searched. Usage: {usage}")
        query = unquoted(rest if platform else args)
        if not query.strip("\"'“”‘’ "):
            raise CommandUsageError(f"Usage: {usage}, e.g. /search spring flowers (public Bluesky posts)")
        return self._one("SEARCH_POSTS", {"platform": SEARCH_PLATFORM, "query": query}, usage)


def with_scheme(address: str) -> str:
    """`example.com/page` as https://example.com/page; any other text as it is."""
    return f"https://{address}" if BARE_HOST.match(address) else address
