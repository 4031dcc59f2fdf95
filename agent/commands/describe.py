"""Saying what actions did, in a few plain lines for the owner: "Posted on Bluesky: URL",
"Remembered: city = Lisbon.", never an action's internal name."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from protocol.hold_reasons import HoldReason, Sender, held_thing
from protocol.platform_names import PLATFORM_NAMES
from protocol.untrusted import sanitise_text

MAX_REPLY_CHARS = 3000
MAX_ITEMS = 10
OUTBOX_FILE = "outbox.jsonl"
OUTBOX = f"the router's {OUTBOX_FILE}"
# action -> (what asking for it is, in words; what it is once done). {p}: the platform's name.
WORDS = {
    "CREATE_POST": ("post on {p}", "Posted on {p}"),
    "LIKE_POST": ("like the post on {p}", "Liked the post on {p}"),
    "DELETE_POST": ("delete your post on {p}", "Deleted your post on {p}"),
    "GET_NOTIFICATIONS": ("read your notifications on {p}", "Read your notifications on {p}"),
    "GET_PROFILE": ("read your profile on {p}", "Read your profile on {p}"),
    "SEARCH_POSTS": ("search posts on {p}", "Searched posts on {p}"),
    "FETCH_POST": ("read the post on {p}", "Read the post on {p}"),
    "AUTH_TEST": ("check your login on {p}", "Your login on {p} works"),
    "MOLTBOOK_FEED": ("read the Moltbook feed", "Read the Moltbook feed"),
    "MOLTBOOK_COMMENT": ("comment on Moltbook", "Commented on Moltbook"),
    "_MEMORY_WRITE": ("remember that", "Remembered"),
    "_MEMORY_FORGET": ("forget that", "Forgot"),
    "_BROWSER_VISION": ("open the page", "Opened the page"),
    "_LLM_SUMMARY": ("summarise the page", "Summarised the page"),
}


def platform_name(platform: Any) -> str:
    return PLATFORM_NAMES.get(str(platform), str(platform or "the platform"))


def in_words(action: str) -> str:
    """An action with no words of its own, readable: MOLTBOOK_FEED -> "moltbook feed"."""
    return action.strip("_").lower().replace("_", " ")


def asking(action: str, params: dict[str, Any] | None = None, platform: Any = None) -> str:
    """What doing `action` is: "post on Bluesky", "reply on Mastodon"."""
    params = params or {}
    where = platform_name(platform or params.get("platform"))
    if action == "CREATE_POST" and params.get("reply_to"):
        return f"reply on {where}"
    if action in WORDS:
        return WORDS[action][0].format(p=where)
    return f"{in_words(action)} on {where}" if (platform or params.get("platform")) else in_words(action)


def the_thing(action: str, platform: Any, reply: bool = False, why: Any = None) -> str:
    """The command named by who asked for it (`why`, a stored `protocol.hold_reasons.HoldReason`):
    "your Bluesky post", "your like on Mastodon", "a Bluesky post an MCP client asked for"."""
    reason = HoldReason.from_dict(why)
    sender, author = (reason.sender, reason.author) if reason is not None else (Sender.OWNER, "")
    where = platform_name(platform)
    if action == "DELETE_POST" and sender == Sender.OWNER:
        return f"the deletion of your post on {where}"
    if action == "CREATE_POST":
        thing = f"{where} reply" if reply else f"{where} post"
    elif action == "LIKE_POST":
        thing = f"like on {where}"
    elif action == "DELETE_POST":
        thing = f"deletion of a post on {where}"
    else:
        platform = None if platform == "router" else platform  # the router's own notebook: no platform
        thing = f"request to {asking(action, platform=platform)}"
    return held_thing(thing, sender, author)


def describe_results(results: list[dict[str, Any]]) -> str:
    return "\n".join(describe_one(r) for r in results)[:MAX_REPLY_CHARS]


def router_reason(action: str, message: str) -> tuple[str, str]:
    """(the approval id if the router named one, the router's reason without its leading
    "CREATE_POST (bsky:post) denied:", which repeats in internal names what the reply says)."""
    prefix = rf"^{re.escape(action)} \([^)]*\) (?:denied|waits for the owner's approval \(id ([^)]*)\)):\s*"
    found = re.match(prefix, message)
    return (found.group(1) or "", message[found.end():]) if found else ("", message)


def describe_one(observation: dict[str, Any]) -> str:
    action, status = str(observation.get("action", "?")), observation.get("status", "?")
    params: dict[str, Any] = observation["params"] if isinstance(observation.get("params"), dict) else {}
    approval_id, message = router_reason(
        action, str(observation.get("message") or observation.get("error") or "").strip()
    )
    doing = asking(action, params)
    if status == "ok":
        return done(action, params, observation.get("result") or {})
    if status == "pending_approval":
        ident = f" (id {approval_id})" if approval_id else ""
        return f"Waiting for your approval{ident}: {doing}. {message[:1].upper()}{message[1:]}".rstrip()
    if status == "denied":
        return f"Not done: the router refused to {doing}: {message or 'denied'}"
    if status == "expired":
        return f"Not done: the request to {doing} expired before the router took it. {message}".rstrip()
    if status == "unknown":
        return f"Not sure whether I could {doing} (it may still happen): {message or 'no answer yet'}"
    if status == "skipped":
        return message
    return f"Could not {doing}: {message or status}"


def done(action: str, params: dict[str, Any], result: dict[str, Any]) -> str:
    """One line on an action that went through."""
    if action == "_MEMORY_WRITE" and isinstance(params.get("new_memory"), dict):
        pairs = "; ".join(f"{k} = {_short(v)}" for k, v in params["new_memory"].items())
        return f"Remembered: {pairs}{result.get('disk', '')}."
    if action == "_MEMORY_FORGET" and isinstance(result.get("forgotten"), list):
        return f"Forgot: {', '.join(map(str, result['forgotten']))}{result.get('disk', '')}."
    if isinstance(result.get("notifications"), list):
        return describe_notifications(result)
    if isinstance(result.get("posts"), list):
        return describe_posts(result)
    if result.get("summary"):
        return f"Summary of the page: {result['summary']}"
    what = "Replied on {p}" if action == "CREATE_POST" and params.get("reply_to") else None
    what = what or (WORDS[action][1] if action in WORDS else f"Done: {in_words(action)}")
    what = what.format(p=platform_name(params.get("platform") or result.get("platform")))
    if result.get("dry_run"):
        real = result.get("to_send_for_real")
        extra = f"; to send it for real, {real}" if real else ""
        return f"{what} (dry run: written to {OUTBOX}, not sent{extra})."
    if result.get("url"):
        return f"{what}: {result['url']}"
    if result.get("message"):
        return f"{what}: {result['message']}"
    shown = {k: v for k, v in result.items() if k not in ("ok", "id", "platform")}
    if action in WORDS or not shown:
        return f"{what}."
    return f"{what}: {json.dumps(shown, ensure_ascii=False, default=str)[:500]}"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"


def describe_notifications(result: dict[str, Any]) -> str:
    """Other people's words, shown to the owner: cleaned of control characters and cut short."""
    where = platform_name(result.get("platform"))

    def line(item: dict[str, Any], author: str, text: str, flag: str) -> str:
        return f"- {item.get('kind', '?')} from {author}: {text}{flag}".rstrip(": ")

    items = result["notifications"]
    return other_peoples(items, f"notification(s) on {where}", f"No notifications on {where}.", line)


def describe_posts(result: dict[str, Any]) -> str:
    """Posts a search found: other people's words, shown as notifications are."""
    where = platform_name(result.get("platform"))

    def line(item: dict[str, Any], author: str, text: str, flag: str) -> str:
        link = f" ({sanitise_text(str(item['url']), 200).text})" if item.get("url") else ""
        return f"- {author}: {text}{link}{flag}"

    items = [item for item in result["posts"] if isinstance(item, dict)]
    return other_peoples(items, f"post(s) found on {where}", f"No posts found on {where}.", line)


def other_peoples(
    items: list[dict[str, Any]], counted: str, none: str, line: Callable[[dict[str, Any], str, str, str], str]
) -> str:
    """A list of items other people wrote: each author and text cleaned and cut short, flagged ones
    marked, at most MAX_ITEMS shown; `line` words one item from those."""
    if not items:
        return none
    lines = [f"{len(items)} {counted}:"]
    for item in items[:MAX_ITEMS]:
        author = sanitise_text(str(item.get("author") or "someone"), 80).text
        text = sanitise_text(str(item.get("text") or ""), 200).text
        flag = " [flagged: looks like prompt injection]" if item.get("flagged") else ""
        lines.append(line(item, author, text, flag))
    if len(items) > MAX_ITEMS:
        lines.append(f"… and {len(items) - MAX_ITEMS} more")
    return "\n".join(lines)
