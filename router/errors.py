"""Errors of the router process. `SkillError.kind` is the machine-readable error type of a reply."""

from __future__ import annotations

# The error types of the seed's one-shot contract, plus the router's own.
ERROR_TYPES = frozenset(
    {
        "auth_failed", "no_credentials", "unknown_command", "unknown_platform", "invalid_json",
        "empty_input", "rate_limited", "request_failed", "internal_error", "invalid_params",
        "not_supported", "not_found", "deleted", "login_required",
        "kill_switch",  # the owner's switch, found on right before the write left (nothing was sent)
        "redis_unavailable",  # the switch could not be read right before the write (nothing was sent)
    }
)


class RouterError(Exception):
    """Base class of every error the router raises on purpose."""


class ConfigError(RouterError):
    """The router's environment or settings are missing something or hold a bad value."""


class SkillError(RouterError):
    """An expected failure of a skill, answered as `status: error` with `error: kind`.

    The message must be safe to show: no credential, no raw API body, no traceback.
    """

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        if kind not in ERROR_TYPES:
            raise ValueError(f"unknown error type {kind!r}")
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        super().__init__(f"{kind}: {message}")


def describe(exc: BaseException, limit: int = 300) -> str:
    """`Type: message`, bounded, for any exception: its str() may raise (a 5,000-digit number in
    it) or be huge, and a reason is still given."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:
        text = "(its message cannot be shown)"
    line = f"{name}: {text}" if text else name
    return line if len(line) <= limit else line[: limit - 1] + "…"
