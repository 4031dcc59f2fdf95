"""One audit line in words an owner reads: what happened, where, from whom, what the policy said.

`describe` turns a router's audit record into {sentence, text, link, origin, outcome, decision,
dry_run, platform, kind, ts}; the fields are plain strings the page inserts as text. `matches`
is the activity filter (platform, kind, outcome, origin, search words).
"""

from __future__ import annotations

from typing import Any

from dashboard.values import number, text
from protocol.platform_names import PLATFORM_NAMES
from protocol.skill_words import ACTIVITY, in_words

PLATFORMS = {**PLATFORM_NAMES, "router": "the router"}
ORIGINS = {
    "console": "from the console",
    "telegram": "from Telegram",
    "autonomy": "by autonomy",
    "explain": "from explain",
    "dashboard": "from the dashboard",
    "mcp": "from an MCP client",
    "cli": "from the command line",
    "mention": "from a mention",
    "forward": "from a forwarded message",
}
OUTCOMES = {  # audit status -> the word the filter and the page use
    "ok": "done",
    "pending_approval": "waiting",
    "denied": "refused",
    "error": "failed",
    "unknown": "unknown",
    "expired": "expired",
    "started": "started",  # a write's line before it runs (audit before effect); its outcome follows
}
VERBS = {  # kind -> (infinitive, past)
    "post": ("post on {p}", "Posted on {p}"),
    "reply": ("reply on {p}", "Replied on {p}"),
    "like": ("like a post on {p}", "Liked a post on {p}"),
    "delete": ("delete a post on {p}", "Deleted a post on {p}"),
    "read": ("read {p}", "Read {p}"),
}
REASONS = {
    "kill_switch": "the kill switch was on",
    "quota_exceeded": "today's quota was used up",
    "rate_limited": "too soon after the last one",
    "duplicate": "the same text was posted recently",
    "not_allowed": "the policy does not allow it",
    "circuit_open": "the platform was paused after failures",
    "approval_refused": "the approval was refused",
    "malformed": "the command was malformed",
    "secret_in_text": "the text carried a secret",
    "audit_unavailable": "the audit log could not be written",
}
KIND_WORDS = {"post": "posts", "reply": "replies", "like": "likes", "delete": "deletes"}
MAX_TEXT = 500


def platform_name(platform: str) -> str:
    return PLATFORMS.get(platform, platform or "an unknown platform")


def origin_of(record: dict[str, Any]) -> tuple[str, str]:
    """(filter key, words): the path the command came by (`via` of its origin when the agent sent
    one, else the conversation's channel) and, for a stranger, who."""
    origin = record.get("origin")
    if isinstance(origin, str):
        channel, conversation, author, kind = origin.split(":", 1)[0], "", "", ""
    elif isinstance(origin, dict):
        channel = text(origin.get("via"), 40) or text(origin.get("channel"), 40)
        conversation, author = text(origin.get("conversation"), 80), text(origin.get("author"), 80)
        kind = text(origin.get("kind"), 20)
    else:
        return "other", "from an unknown origin"
    key = channel if channel in ORIGINS else "other"
    words = ORIGINS.get(channel) or f"from {channel or 'an unknown origin'}"
    if key == "telegram" and ":" in conversation:
        words += f" (chat {conversation.split(':', 1)[1][:40]})"
    if author:
        words += f" by {author}"
    if kind == "stranger" and not author:
        words += " (someone else's words)"
    return key, words


def decision_words(decision: str) -> str:
    if not decision:
        return ""
    if decision == "allowed":
        return "allowed by the policy"
    if decision == "pending_approval":
        return "held for your approval"
    if decision == "repeat":
        return "a repeat: the same command had already run once"
    if decision.startswith("approved by "):
        by = decision.removeprefix("approved by ")
        return "approved by you, from the dashboard" if by == "dashboard" else f"approved by {by}"
    for prefix in ("denied: ", "refused: "):
        if decision.startswith(prefix):
            reason = decision.removeprefix(prefix)
            return "refused: " + REASONS.get(reason, reason.replace("_", " "))
    if decision.startswith("owner decision: "):
        return "your decision, relayed from a chat: " + decision.removeprefix("owner decision: ")
    return decision.replace("_", " ")


def sentence(kind: str, platform: str, outcome: str, dry_run: bool, action: str) -> str:
    name = platform_name(platform)
    if action in ACTIVITY:  # the router's own skills (a ping, a note): their words, not "read the router"
        what, past = ACTIVITY[action]
    elif kind not in VERBS:
        what = f"run {in_words(action) if action else 'a command'}"
        past = f"Ran {in_words(action) if action else 'a command'}"
    else:
        what, past = (phrase.format(p=name) for phrase in VERBS[kind])
    if outcome == "done":
        return f"Would {what} (dry run: nothing was sent)" if dry_run else past
    return {
        "waiting": f"Waiting for your approval to {what}",
        "refused": f"Refused to {what}",
        "failed": f"Failed to {what}",
        "unknown": f"Not known whether it managed to {what} (it may have happened)",
        "expired": f"Expired before it could {what}",
        "started": f"Started to {what} (its outcome follows)",
    }.get(outcome, f"Tried to {what}")


def safe_link(value: Any) -> str:
    url = text(value, 2000)
    return url if url.startswith(("https://", "http://")) else ""


def describe(record: dict[str, Any]) -> dict[str, Any]:
    effect: dict[str, Any] = record["effect"] if isinstance(record.get("effect"), dict) else {}
    platform, kind = text(effect.get("platform"), 40), text(effect.get("kind"), 20)
    status = text(record.get("status"), 40)
    outcome = OUTCOMES.get(status, "unknown")
    dry = record.get("dry_run") is True
    origin, origin_words = origin_of(record)
    error = text(record.get("error"), 200)
    said = sentence(kind, platform, outcome, dry, text(record.get("action"), 60))
    setup = error == "no_credentials"  # a platform not connected yet: setting up, not a failure
    if setup:
        what = said.removeprefix("Failed to ")
        name = platform_name(platform)
        said = f"Could not {what}: {name} is not connected yet (no credentials in router/.env)"
    return {
        "ts": number(record.get("ts")),
        "sentence": said,
        "setup": setup,
        "text": text(record.get("text"), MAX_TEXT),
        "link": safe_link(record.get("url")),
        "origin": origin,
        "origin_words": origin_words,
        "decision": decision_words(text(record.get("decision"), 200)),
        "error": error.replace("_", " "),
        "outcome": outcome,
        "dry_run": dry,
        "platform": platform,
        "platform_name": platform_name(platform) if platform else "",
        "kind": kind,
        "action": text(record.get("action"), 60),
        "router": text(record.get("router"), 64),
        "command_id": text(record.get("command_id"), 80),
        "read": _read_before(record),
    }


def _read_before(record: dict[str, Any]) -> list[str]:
    """The outside sources the asking turn had read (its taint), when the audit line says."""
    origin = record.get("origin")
    taint = origin.get("taint") if isinstance(origin, dict) else None
    if not isinstance(taint, list):
        return []
    return [item[:200] for item in taint[:10] if isinstance(item, str)]


FILTERS = ("platform", "kind", "outcome", "origin")


def superseded(item: dict[str, Any], finished: set[str] | dict[str, None], wanted: dict[str, str]) -> bool:
    """A write's 'started' line whose outcome line exists says nothing more: left out, unless the
    owner asks for started lines (a started line with no outcome is a write that may have run)."""
    return (
        item["outcome"] == "started" and item["command_id"] in finished and wanted.get("outcome") != "started"
    )


def matches(item: dict[str, Any], wanted: dict[str, str], words: list[str]) -> bool:
    for name in FILTERS:
        if wanted.get(name) and item[name] != wanted[name]:
            return False
    if not words:
        return True
    haystack = " ".join(
        str(item[k]) for k in ("sentence", "text", "decision", "error", "link", "origin_words", "action")
    ).lower()
    return all(word in haystack for word in words)
