"""Token counts of one LLM call, as the provider itself reported them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Used only when a provider's answer carries no usage (an OpenAI-compatible server that omits
# it): about four characters a token for English text. Counting a little high is the safe side.
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int
    estimated: bool = False  # True when the provider reported nothing and the counts are guessed

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def estimated_usage(prompt: str, reply: str) -> Usage:
    return Usage(estimate_tokens(prompt), estimate_tokens(reply), estimated=True)


def count(value: Any) -> int | None:
    """A token count from a provider field: a non-negative int, else None (absent or nonsense)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def usage_or_estimate(input_tokens: Any, output_tokens: Any, prompt: str, reply: str) -> Usage:
    """The provider's counts when both are there, else the estimate from the texts."""
    given_in, given_out = count(input_tokens), count(output_tokens)
    if given_in is None or given_out is None:
        return estimated_usage(prompt, reply)
    return Usage(given_in, given_out)
