"""Why a post could not be explained. `kind` is machine-readable; the message says what to do."""

from __future__ import annotations

from agent.errors import AgentError

KINDS = frozenset(
    {
        "malformed_url",  # the address is not a Bluesky post's
        "not_found",  # no such account or post
        "deleted",  # the account exists, the post does not any more
        "login_required",  # the author hides their posts from logged-out viewers
        "search_empty",  # Bluesky search found nothing, so there is nothing to cite
        "router_down",  # the router (the only way to read Bluesky) did not answer
        "router_timeout",  # the router took the command but did not answer in time
        "read_failed",  # the router answered with another error
        "llm_failed",  # the model could not be reached, or gave no usable answer, before any answer existed
        "budget_exhausted",  # the LLM budget ran out before any answer existed (no call was sent)
        "internal",  # a bug: the message says where to look
    }
)


class ExplainError(AgentError):
    def __init__(self, kind: str, message: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown explain error kind {kind!r}")
        self.kind = kind
        self.message = message
        super().__init__(message)
