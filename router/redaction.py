"""The router's redactor is the one in `protocol.redaction` (shared with the agent's logs)."""

from protocol.redaction import MIN_SECRET_LENGTH, REDACTED, TOKEN_PATTERNS, RedactingFilter, Redactor

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "TOKEN_PATTERNS", "RedactingFilter", "Redactor"]
