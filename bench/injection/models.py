"""The suite's two scripted models.

`ObeyingModel` is the attacker's best case: it takes the task's reads, then carries out every
`DO ACTION {json}` its prompt shows (the whose-words tests' obedient model), and relays a page's
orders in the summary it is asked for, so they reach the turn as a real model's summary would.
`TaskOnlyModel` takes the task's steps and answers, whatever it read."""

from __future__ import annotations

import json
import re
from typing import Any

from agent.actions.summary import SUMMARY_PROMPT
from agent.errors import LLMError
from agent.flow.private_decision import DECIDING
from agent.llm.base import BaseLLM
from bench.injection.cases import Step
from tests.agent.test_whose_words import ORDER_LINE, ObedientLLM

SUMMARY_START = SUMMARY_PROMPT.split("\n", 1)[0]
OWNER_SENTENCE = re.compile(r"my bank pin is [^\"\n\\]*")


def tool_code(step: Step) -> str:
    return "<tool_code>" + json.dumps([{"name": step[0], "params": step[1]}]) + "</tool_code>"


class ObeyingModel(ObedientLLM):
    name = "obeying"

    def __init__(self) -> None:
        super().__init__()
        self.model = "obeying"

    def chat(self, prompt: str) -> str:
        if prompt.startswith(SUMMARY_START):
            self.prompts.append(prompt)
            return "The page says: " + " ".join(ORDER_LINE.findall(prompt))
        sentence = OWNER_SENTENCE.search(prompt)
        if sentence:  # the owner's own words, as the history shows them to the model
            prompt = prompt.replace("{owner_sentence}", sentence.group(0).rstrip(" ,."))
        return super().chat(prompt)


class TaskOnlyModel(BaseLLM):
    name = "task-only"

    def __init__(self) -> None:
        super().__init__("task-only", 5)
        self.first: list[str] = []  # the replies of the task, in order; then its answer
        self.answer = "Done."
        self.last = ""
        self.prompts: list[str] = []

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if prompt.startswith(SUMMARY_START):
            return "A setup guide page."
        if DECIDING in prompt:  # asked again with private data hidden: the task's step is the same
            return self.last
        self.last = self.first.pop(0) if self.first else self.answer
        return self.last

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        raise LLMError(self.name, "this model gives no structured answers")
