"""Choosing by ranking, not generating: how likely the model finds each candidate answer.

Each candidate (a label, or words describing an action) is a token sequence that could follow
the prompt. Its score is the model's log-likelihood of those tokens, summed or averaged per
token, optionally minus the same candidate's log-likelihood after a content-free message
("contextual calibration": it removes the model's prior liking for a candidate whatever the
message says). The best score wins. Every candidate gets a score, so a label the model would
never begin to write can still win when it fits the message best.

Pure logic over a `TokenModel`; `scorer.py` is the llama.cpp side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Normalisation = Literal["sum", "mean"]


class TokenModel(Protocol):
    """A causal language model positioned after some context."""

    def position(self) -> int:
        """How many tokens are evaluated."""

    def rewind(self, position: int) -> None:
        """Forget every token after the first `position` ones."""

    def feed(self, tokens: Sequence[int]) -> list[Sequence[float]]:
        """Evaluate more tokens; the next-token log-probabilities after each of them."""

    def next_logprobs(self) -> Sequence[float]:
        """Log-probabilities of every vocabulary token coming next."""


def continuation_logprobs(
    model: TokenModel, candidates: Mapping[str, Sequence[int]]
) -> dict[str, list[float]]:
    """For each candidate, the log-probability of each of its tokens following the model's
    current context. Candidates sharing leading tokens share their evaluation; the model is left
    at the context it started from."""
    start = model.position()
    path: list[int] = []  # tokens fed after the context
    logprobs_after: list[Sequence[float]] = [model.next_logprobs()]  # [i]: after path[:i]
    found: dict[str, list[float]] = {}
    for name, tokens in sorted(candidates.items(), key=lambda item: list(item[1])):
        if not tokens:
            raise ValueError(f"candidate {name!r} has no tokens")
        shared = _common_length(path, tokens[:-1])
        if shared < len(path):
            model.rewind(start + shared)
            del path[shared:]
            del logprobs_after[shared + 1 :]
        more = list(tokens[len(path) : len(tokens) - 1])  # the last token's successors are not needed
        logprobs_after += model.feed(more)
        path += more
        found[name] = [float(logprobs_after[i][token]) for i, token in enumerate(tokens)]
    model.rewind(start)
    return found


def sequence_logprobs(model: TokenModel, tokens: Sequence[int]) -> list[float]:
    """The log-probability of each of `tokens` following the current context (which they then
    extend, all but the last: rewind to drop them)."""
    if not tokens:
        return []
    after = [model.next_logprobs(), *model.feed(tokens[:-1])]
    return [float(row[token]) for row, token in zip(after, tokens, strict=True)]


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def score(logprobs: Sequence[float], normalisation: Normalisation) -> float:
    total = math.fsum(logprobs)
    return total / len(logprobs) if normalisation == "mean" else total


@dataclass(frozen=True)
class Ranked:
    name: str
    score: float  # higher is better
    raw: float  # before calibration


def rank(
    logprobs: Mapping[str, Sequence[float]],
    normalisation: Normalisation,
    baseline: Mapping[str, Sequence[float]] | None = None,
) -> list[Ranked]:
    """Candidates best first. With a baseline (the same candidates after a content-free message),
    each score is the difference of the two, both normalised alike. Ties keep the given order."""
    ranked = []
    for name, values in logprobs.items():
        raw = score(values, normalisation)
        prior = score(baseline[name], normalisation) if baseline is not None else 0.0
        ranked.append(Ranked(name, raw - prior, raw))
    return sorted(ranked, key=lambda r: -r.score)


def log_softmax(logits: Sequence[float]) -> list[float]:
    """Pure-Python log-softmax (the llama.cpp side uses numpy for speed)."""
    top = max(logits)
    norm = top + math.log(math.fsum(math.exp(x - top) for x in logits))
    return [x - norm for x in logits]
