"""The router's redactor is the one in `protocol.redaction` (shared with the agent's logs).

`CleanMemo` is that redactor with a memory of the short strings it has already found clean:
most strings the router redacts (JSON keys, statuses, action names, router and channel names)
are the same on every command, and a PING's reply and audit line held some thirty of them.
A string found clean is clean again (the redactor's secrets and patterns are fixed when it is
built), so answering it from memory gives the very same output. A string that held anything to
redact is never remembered: the memory holds no secret-bearing text and it is redacted afresh
every time.
"""

from __future__ import annotations

import threading

from protocol.redaction import MIN_SECRET_LENGTH, REDACTED, TOKEN_PATTERNS, RedactingFilter, Redactor

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "TOKEN_PATTERNS", "CleanMemo", "RedactingFilter", "Redactor"]

MEMO_MAX_CHARS = 256  # longer strings (post texts, serialised replies) are rarely seen twice
MEMO_MAX_ENTRIES = 8192  # then the memory starts over: a bound, not an eviction policy


class CleanMemo(Redactor):
    def __init__(self, base: Redactor) -> None:
        # Takes over the base's compiled secrets and patterns instead of compiling them again;
        # every other method (value, finds, …) is the base class's own, calling `text` below.
        self.__dict__.update(vars(base))
        self._clean: set[str] = set()
        self._memo_lock = threading.Lock()

    def text(self, text: str) -> str:
        if text in self._clean:
            return text
        redacted = super().text(text)
        if redacted == text and len(text) <= MEMO_MAX_CHARS:
            with self._memo_lock:
                if len(self._clean) >= MEMO_MAX_ENTRIES:
                    self._clean = set()
                self._clean.add(text)
        return redacted


def memoized(redactor: Redactor) -> Redactor:
    return redactor if isinstance(redactor, CleanMemo) else CleanMemo(redactor)
