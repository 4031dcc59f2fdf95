"""The model's choice of label, by ranking: which answer does it find likeliest to give?

Each label on offer stands for the first words SafeClaw would answer with ("I will publish a
new post."). After the owner's message, the model's log-likelihood of each answer is averaged
per token, and the same answer's average after content-free messages ("N/A", "", "[MASK]") is
subtracted (contextual calibration), so an answer the model likes whatever it is told does not
win on that alone. The best label wins. Measured on bench/data/intent_dev_requests.json, which
was written apart from the everyday suite and is the only set this was chosen on.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.llm.local.ranking import Normalisation, Ranked, TokenModel, continuation_logprobs, rank
from agent.llm.local.warm_cache import WARM_CACHE

NORMALISATION: Normalisation = "mean"
CONTENT_FREE = ("N/A", "", "[MASK]")
END = "<|im_end|>"
# SafeClaw's own first words for each answer; an action without a line here gets "I will <what it does>."
ANSWERS = {
    "post": "I will publish a new post.",
    "like": "I will like the post.",
    "delete": "I will delete your post.",
    "notifications": "I will read your notifications.",
    "remember": "I will remember that.",
    "forget": "I will forget that.",
    "open": "I will open the web page and summarise it.",
    "profile": "I will read your profile.",
    "search": "I will search public posts.",
    "reply": "I will reply to the post.",
    "who": "I am SafeClaw, your personal AI agent.",
    "abilities": "I can post, reply, like and delete posts, and more.",
    "recall": "You told me that",
    "refuse": "I cannot share secrets or do harm.",
    "chat": "Hello! How can I help?",
}


def answer_of(label: str, description: str) -> str:
    if label in ANSWERS:
        return ANSWERS[label]
    what = description.strip().rstrip(".:")
    return f"I will {what[:1].lower()}{what[1:]}."


@dataclass(frozen=True)
class Choice:
    label: str
    ranking: list[Ranked]  # best first, every label on offer


Tokenize = Callable[[str], list[int]]
Enter = Callable[[str], object]  # put the model right after the fixed prompt, then this message's turn


class Baselines:
    """Each answer's log-probabilities after the content-free messages, per model and fixed
    prompt: computed once (at warm-up, or read from the disk cache), the same for every message."""

    def __init__(self) -> None:
        self._saved: dict[tuple[int, str], dict[str, list[float]]] = {}
        self._lock = threading.Lock()

    def get(
        self, key: tuple[int, str], answers: dict[str, list[int]], model: TokenModel, enter: Enter,
        disk_key: str = "",
    ) -> dict[str, list[float]]:
        with self._lock:
            known = self._saved.get(key, {})
            missing = {label: tokens for label, tokens in answers.items() if label not in known}
            if missing and disk_key:
                known.update(WARM_CACHE.load_baselines(disk_key, missing))
                missing = {label: tokens for label, tokens in missing.items() if label not in known}
            if missing:
                runs = []
                for message in CONTENT_FREE:
                    enter(message)
                    runs.append(continuation_logprobs(model, missing))
                for label in missing:
                    per_token = zip(*(run[label] for run in runs), strict=True)
                    known[label] = [sum(values) / len(runs) for values in per_token]
                if disk_key:
                    WARM_CACHE.save_baselines(disk_key, missing, {label: known[label] for label in missing})
            if key not in self._saved:
                self._saved = {k: v for k, v in self._saved.items() if k[0] != key[0]}  # one per model
                self._saved[key] = known
            return {label: known[label] for label in answers}


BASELINES = Baselines()


def prompt_key(model_id: int, prefix: str) -> tuple[int, str]:
    return model_id, hashlib.sha256(prefix.encode()).hexdigest()


def answer_tokens(labels: Sequence[tuple[str, str]], tokenize: Tokenize) -> dict[str, list[int]]:
    """label -> the tokens of its answer, ending the assistant's turn (so a longer answer that
    merely begins the same way is not counted as this one)."""
    return {label: tokenize(answer_of(label, description) + END) for label, description in labels}


def choose(
    model: TokenModel,
    answers: dict[str, list[int]],
    baseline: dict[str, list[float]],
) -> Choice:
    """The model is positioned right after the owner's message and the assistant's turn opening."""
    if not answers:
        raise ValueError("no labels to choose from")
    ranking = rank(continuation_logprobs(model, answers), NORMALISATION, baseline)
    return Choice(ranking[0].name, ranking)
