"""An LLM that always wants to post: for autonomy tests and benchmarks.

Turn prompts get a reply that comments on a post it was shown and creates a post of its own;
scoring prompts (the gate's) get `{"score": S}`. Usage is one token per word, as the scripted
provider counts. Deterministic, except that post texts can be made unique or repeated on purpose.
"""

from __future__ import annotations

import json
import random
import re

from agent.llm.base import BaseLLM
from agent.llm.scripted.llm import scripted_usage

POST_ID = re.compile(r"\[post ([0-9a-fA-F-]{8,})")
CYCLE = re.compile(r"acting on your own, cycle (\d+),")
WORDS = tuple(
    [
        "agents",
        "bounds",
        "budget",
        "cycles",
        "feeds",
        "quotas",
        "pacing",
        "memory",
        "rules",
        "owners",
        "trust",
        "safety",
        "models",
        "tokens",
        "context",
        "prompts",
        "routers",
        "queues",
        "circuits",
        "duplicates",
        "kindness",
        "accuracy",
        "sources",
        "evidence",
        "humans",
        "learning",
        "mistakes",
        "proposals",
        "governance",
        "heartbeat",
        "journal",
        "cost",
        "latency",
        "caching",
        "retries",
        "errors",
        "weather",
        "gardens",
        "rivers",
        "mountains",
        "coffee",
        "music",
        "books",
        "chess",
        "travel",
        "cooking",
        "science",
        "history",
        "art",
        "maths",
        "poetry",
        "cities",
        "forests",
        "oceans",
        "planets",
        "stars",
    ]
)


def sentence(seed: str, words: int = 14) -> str:
    """Words picked by the seed: different seeds give texts far under 90% alike."""
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


class EagerPoster(BaseLLM):
    name = "scripted"

    def __init__(self, score: float = 0.9, repeat_text: bool = False, model: str = "eager-poster") -> None:
        super().__init__(model, 10.0)
        self.score = score
        self.repeat_text = repeat_text  # True: the same post every time (the duplicate guard's case)
        self.turn_calls = 0
        self.score_calls = 0
        self.extra_actions: list[dict[str, object]] = []  # appended to every turn's actions
        self._acted_in: str | None = None  # the cycle it already acted in: the next step ends the turn

    def chat(self, prompt: str) -> str:
        if prompt.startswith("You review a draft"):
            self.score_calls += 1
            reply = json.dumps({"score": self.score, "why": "fits the rules"})
        else:
            self.turn_calls += 1
            cycle = CYCLE.search(prompt)
            this_cycle = cycle.group(1) if cycle else str(self.turn_calls)
            if this_cycle == self._acted_in:
                reply = "Done for this cycle."  # it has seen its actions' results: the turn ends
            else:
                self._acted_in = this_cycle
                reply = self._act(prompt)
        self.last_usage = scripted_usage(prompt, reply)
        return reply

    def estimate_input_tokens(self, prompt: str) -> int:
        return scripted_usage(prompt, "").input_tokens

    def _act(self, prompt: str) -> str:
        n = "same" if self.repeat_text else str(self.turn_calls)
        actions: list[dict[str, object]] = [
            {
                "name": "CREATE_POST",
                "params": {
                    "platform": "moltbook",
                    "subreddit": "general",
                    "title": sentence(f"title {n}", 5),
                    "text": sentence(f"post {n}"),
                },
            }
        ]
        found = POST_ID.search(prompt)
        if found:
            actions.append(
                {
                    "name": "MOLTBOOK_COMMENT",
                    "params": {"post_id": found.group(1), "text": sentence(f"comment {n}")},
                }
            )
        actions += self.extra_actions
        return "I will post.\n<tool_code>" + json.dumps(actions) + "</tool_code>"
