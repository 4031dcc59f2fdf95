"""The one interface every LLM provider implements: a prompt in, text out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from agent.errors import LLMError
from agent.llm.structured import parse_structured
from agent.llm.usage import Usage, estimate_tokens

__all__ = ["BaseLLM", "LLMError", "Usage"]
REPLY_TOKENS = 1024  # of a model's window, kept for its reply (at most a quarter of the window)


class BaseLLM(ABC):
    """A chat model. `chat()` returns the model's text or raises `LLMError`, never an error as text."""

    name: str = "base"
    # The prompt template this provider reads from the workspace. Small local models follow
    # the tool_code format far better with worked examples, so they get their own variant.
    prompt_template: str = "PROMPT.md"
    # Whether the model can read its actions' results and go on (observe). A tiny model only
    # gets confused by them, so for it a turn ends once its actions have run.
    observes_results: bool = True

    def __init__(self, model: str, timeout: float = 60.0) -> None:
        self.model = model
        self.timeout = timeout
        # The token counts of the last successful `chat()`, from the provider's own usage fields.
        self.last_usage: Usage | None = None

    @abstractmethod
    def chat(self, prompt: str) -> str:
        """Send one prompt (as a single user message) and return the reply text."""

    def context_window(self) -> int | None:
        """Tokens the model reads at most, prompt and reply together; None when there is no limit
        to fit (a scripted model). Providers say it explicitly, never leave it to a server default."""
        return None

    def prompt_budget(self) -> int | None:
        """Tokens a prompt may take: the window less room for the reply."""
        window = self.context_window()
        if window is None:
            return None
        return max(256, window - min(REPLY_TOKENS, window // 4))

    def estimate_input_tokens(self, prompt: str) -> int:
        """About how many input tokens `prompt` will cost, before it is sent (for the budget)."""
        return estimate_tokens(prompt)

    def chat_json(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        """One JSON object matching `schema`, asked for at temperature 0 in the provider's JSON mode.

        Raises LLMError when the provider fails or its answer is not such an object."""
        return parse_structured(self.name, self.chat_structured(prompt, schema), schema)

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """The raw text of a temperature-0 answer constrained to `schema` (provider-specific)."""
        raise LLMError(self.name, "this provider has no structured (JSON schema) mode",
                       "use ollama, openai, gemini or local")

    def prepare(self, prompt: str) -> None:
        """Do ahead of the first message what every turn shares (`prompt`: the provider's prompt
        template, placeholders unfilled). The default has nothing to prepare."""
        return None

    def check(self) -> None:
        """Cheaply verify the provider can answer (server up, key accepted, model present); raise LLMError.

        The default has nothing to check.
        """
        return None
