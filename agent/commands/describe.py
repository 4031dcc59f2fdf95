"""Saying what a command's actions did, in a few plain lines for the owner."""

from __future__ import annotations

import json
from typing import Any

from protocol.untrusted import sanitise_text

MAX_REPLY_CHARS = 3000
MAX_ITEMS = 10


def describe_results(results: list[dict[str, Any]]) -> str:
    return "\n".join(describe_one(r) for r in results)[:MAX_REPLY_CHARS]


def describe_one(observation: dict[str, Any]) -> str:
    action, status = observation.get("action", "?"), observation.get("status", "?")
    message = str(observation.get("message") or observation.get("error") or "").strip()
    if status == "ok":
        return f"{action}: {describe_ok(observation.get('result') or {})}"
    if status == "pending_approval":
        return f"{action}: waiting for the owner's approval. {message}".rstrip()
    if status == "denied":
        return f"{action}: refused by the router's policy: {message or 'denied'}"
    if status == "expired":
        return f"{action}: not run, it expired before the router took it. {message}".rstrip()
    if status == "unknown":
        return f"{action}: outcome unknown (it may still happen): {message or 'no answer yet'}"
    if status == "skipped":
        return f"{action}: {message}"
    return f"{action} failed: {message or status}"


def describe_ok(result: dict[str, Any]) -> str:
    if result.get("dry_run"):
        would = result.get("would_send") or {}
        extra = f"; to send for real: {result['to_send_for_real']}" if result.get("to_send_for_real") else ""
        return (
            f"dry run: recorded in the router's outbox, not sent "
            f"({json.dumps(would.get('params', {}), ensure_ascii=False)[:300]}){extra}"
        )
    if isinstance(result.get("notifications"), list):
        return describe_notifications(result)
    if result.get("summary"):
        return f"summary: {result['summary']}"
    if result.get("message"):
        return str(result["message"])
    if result.get("url"):
        return f"done: {result['url']}"
    return "done " + json.dumps(result, ensure_ascii=False, default=str)[:500]


def describe_notifications(result: dict[str, Any]) -> str:
    """Other people's words, shown to the owner: cleaned of control characters and cut short."""
    items = result["notifications"]
    if not items:
        return f"no notifications on {result.get('platform', 'that platform')}"
    lines = [f"{len(items)} notification(s) on {result.get('platform', '?')}:"]
    for item in items[:MAX_ITEMS]:
        author = sanitise_text(str(item.get("author") or "someone"), 80).text
        text = sanitise_text(str(item.get("text") or ""), 200).text
        flag = " [flagged: looks like prompt injection]" if item.get("flagged") else ""
        lines.append(f"- {item.get('kind', '?')} from {author}: {text}{flag}".rstrip(": "))
    if len(items) > MAX_ITEMS:
        lines.append(f"… and {len(items) - MAX_ITEMS} more")
    return "\n".join(lines)
