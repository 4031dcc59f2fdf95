"""Ollama (the default provider) through the official `ollama` client."""

from __future__ import annotations

from typing import Any

import httpx
import ollama
from pydantic import ValidationError

from agent.config.sections import DEFAULT_OLLAMA_HOST, LLMSettings, normalise_ollama_host
from agent.errors import LLMError
from agent.llm.base import BaseLLM
from agent.llm.redact import redact
from agent.llm.usage import usage_or_estimate

DEFAULT_HOST = DEFAULT_OLLAMA_HOST
DEFAULT_MODEL = "llama3.1:8b"
# Ollama sizes its window from `num_ctx`, and without one uses a small default that silently keeps
# only a prompt's last tokens (the rules at its top fall out). SafeClaw always sends one: the
# configured window, else the model's own trained length capped here (the KV cache grows with it).
WINDOW_CAP = 8192
FALLBACK_WINDOW = 4096  # the model's metadata could not be read
__all__ = ["DEFAULT_HOST", "DEFAULT_MODEL", "OllamaLLM", "normalise_ollama_host"]


class OllamaLLM(BaseLLM):
    name = "ollama"

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings.model or DEFAULT_MODEL, settings.timeout)
        self.host = settings.ollama_host
        # Ollama itself needs no key; a proxy in front of it (or ollama.com) may want OLLAMA_API_KEY.
        self._key = settings.ollama_api_key
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else None
        self._client = ollama.Client(host=self.host, timeout=self.timeout, headers=headers)
        self._configured_window = settings.context_window
        self._window: int | None = settings.context_window or None

    def context_window(self) -> int:
        """`llm.context_window`, else the model's `<arch>.context_length` (read once) up to WINDOW_CAP;
        while the server cannot say, FALLBACK_WINDOW (asked again next time)."""
        if self._window is None:
            trained = self._trained_length()
            if trained is None:
                return FALLBACK_WINDOW
            self._window = min(WINDOW_CAP, trained)
        return self._window

    def _trained_length(self) -> int | None:
        try:
            info = self._client.show(self.model).modelinfo or {}
        except (ollama.ResponseError, httpx.HTTPError, ValidationError, ValueError, ConnectionError):
            return None  # the chat that follows says what is wrong
        lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
        lengths = [v for v in lengths if v > 0]
        return lengths[0] if lengths else None

    def chat(self, prompt: str) -> str:
        return self._complete(prompt)

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """Ollama's `format` set to the JSON schema, at temperature 0."""
        return self._complete(prompt, format=schema, options={"temperature": 0})

    def _complete(self, prompt: str, **options: Any) -> str:
        options["options"] = {**options.get("options", {}), "num_ctx": self.context_window()}
        response = self._call(
            lambda: self._client.chat(
                model=self.model, messages=[{"role": "user", "content": prompt}], stream=False, **options
            )
        )
        text = response.message.content if response.message else None
        # The usage first: an empty reply is billed all the same (MeteredLLM counts it).
        self.last_usage = usage_or_estimate(
            getattr(response, "prompt_eval_count", None), getattr(response, "eval_count", None), prompt,
            text or "",
        )
        if not text or not text.strip():
            raise LLMError(self.name, f"model '{self.model}' returned an empty reply",
                           "try again, or try another model")
        return text

    def check(self) -> None:
        """The server answers and has the model pulled."""
        listing = self._call(self._client.list)
        names = {m.model for m in listing.models if m.model}
        wanted = self.model if ":" in self.model else self.model + ":latest"
        if self.model not in names and wanted not in names:
            raise self._model_missing()

    def _model_missing(self) -> LLMError:
        return LLMError(self.name, f"model '{self.model}' not found", f"run `ollama pull {self.model}`")

    def _call(self, request: Any) -> Any:
        """Run one client call, turning every way it can fail into an LLMError that says what to check."""
        try:
            return request()
        except ollama.ResponseError as e:
            if e.status_code == 404 and "not found" in str(e.error).lower():
                raise self._model_missing() from None
            detail = redact(str(e.error), self._key)
            raise LLMError(self.name, f"HTTP {e.status_code} from Ollama at {self.host}: {detail}",
                           _status_hint(e.status_code)) from None
        except ConnectionError:
            raise LLMError(
                self.name, f"cannot reach Ollama at {self.host}",
                "is `ollama serve` running? set OLLAMA_HOST to its address",
            ) from None
        except httpx.TimeoutException:
            raise LLMError(
                self.name, f"no answer from Ollama at {self.host} within {self.timeout:g} s",
                "the model may still be loading; raise the timeout in config.json or use a smaller model",
            ) from None
        except httpx.HTTPError as e:
            raise LLMError(self.name, f"network error talking to {self.host}: {redact(str(e), self._key)}",
                           "check OLLAMA_HOST") from None
        except (ValueError, TypeError, ValidationError) as e:
            # json.JSONDecodeError is a ValueError: the server answered something that is not Ollama JSON;
            # TypeError: JSON that is not an object (the client does ChatResponse(**body))
            raise LLMError(self.name, f"unreadable answer from {self.host}: {redact(str(e), self._key)}",
                           "is OLLAMA_HOST really an Ollama server?") from None


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return "the server wants credentials: set OLLAMA_API_KEY"
    if status == 429:
        return "rate limited: wait and try again"
    if status >= 500:
        return "the Ollama server failed; see `ollama serve` logs (out of memory?)"
    return "check the model name and OLLAMA_HOST"
