"""How long autonomy rests after a router refusal: the router's own retry_after when it gives a
sane one, else the error's default (a day's quota until 00:00 UTC, when the router resets it)."""

from __future__ import annotations

from typing import Any

# Router refusals that pause autonomy, and for how long (seconds) when the reply has no retry_after.
PAUSING_ERRORS = {"kill_switch": 3600.0, "circuit_open": 900.0, "quota_exceeded": 3600.0, "paced": 60.0}
# Refusals that pause only when every public write of a cycle got one: resting until the earliest
# retry_after costs no LLM call, where the next turn would only draft texts the router refuses.
RESTING_ERRORS = frozenset({"quota_exceeded", "paced", "circuit_open"})
DAY = 86400.0


def pause_seconds(event: dict[str, Any], now: float) -> float:
    """Seconds until the router may accept again: its retry_after, else a default for the error."""
    given = event.get("retry_after")
    if isinstance(given, int | float) and not isinstance(given, bool) and 0 < given <= 8 * DAY:
        return float(given)
    if event.get("error") == "quota_exceeded":  # the router's quotas reset at 00:00 UTC
        return (now // DAY + 1) * DAY - now
    return PAUSING_ERRORS.get(str(event.get("error")), 900.0)
