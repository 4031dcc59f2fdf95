"""Google Gemini through the official `google-genai` client."""

from __future__ import annotations

from typing import Any

import httpx
from google import genai
from google.genai import errors, types

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.base import BaseLLM
from agent.llm.redact import redact
from agent.llm.structured import gemini_schema
from agent.llm.usage import usage_or_estimate

DEFAULT_MODEL = "gemini-2.5-flash"
FALLBACK_WINDOW = 32_768  # the model's limits could not be read


def _transport_errors() -> tuple[type[Exception], ...]:
    """The sync client speaks httpx, or its fork httpx2 when that is installed: catch both."""
    found: list[type[Exception]] = [httpx.TimeoutException, httpx.HTTPError]
    try:
        import httpx2  # type: ignore[import-not-found,unused-ignore]

        found += [httpx2.TimeoutException, httpx2.HTTPError]
    except ImportError:
        pass
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()
TIMEOUT_ERRORS = tuple(e for e in TRANSPORT_ERRORS if e.__name__ == "TimeoutException")


class GeminiLLM(BaseLLM):
    name = "gemini"

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings.model or DEFAULT_MODEL, settings.timeout)
        self._key = settings.gemini_api_key
        if not self._key:
            raise LLMError(self.name, "GEMINI_API_KEY is not set",
                           "get a key at https://aistudio.google.com/apikey and put it in .env")
        self.base_url = settings.gemini_base_url or None
        self.where = self.base_url or "generativelanguage.googleapis.com"
        options = types.HttpOptions(base_url=self.base_url, timeout=int(self.timeout * 1000))
        self._client = genai.Client(api_key=self._key, vertexai=False, http_options=options)
        self._window: int | None = settings.context_window or None

    def context_window(self) -> int:
        """`llm.context_window`, else the model's own input limit (read once), else a safe guess."""
        if self._window is None:
            try:
                limit = getattr(self._call(lambda: self._client.models.get(model=self.model)),
                                "input_token_limit", None)
            except LLMError:  # not known: the guess below, and the next call says what is wrong
                limit = None
            self._window = limit if isinstance(limit, int) and limit > 0 else FALLBACK_WINDOW
        return self._window

    def chat(self, prompt: str) -> str:
        return self._complete(prompt, None)

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """JSON `response_schema` (Gemini's OpenAPI subset of the schema) at temperature 0."""
        config = types.GenerateContentConfig(
            temperature=0, response_mime_type="application/json", response_schema=gemini_schema(schema)
        )
        return self._complete(prompt, config)

    def _complete(self, prompt: str, config: types.GenerateContentConfig | None) -> str:
        response = self._call(
            lambda: self._client.models.generate_content(model=self.model, contents=prompt, config=config)
        )
        text = _reply_text(response)
        # The usage first: an empty reply is billed all the same (MeteredLLM counts it).
        usage = getattr(response, "usage_metadata", None)
        # Thinking models bill their thoughts as output too.
        thoughts = getattr(usage, "thoughts_token_count", None) or 0
        output = getattr(usage, "candidates_token_count", None)
        self.last_usage = usage_or_estimate(
            getattr(usage, "prompt_token_count", None),
            output + thoughts if isinstance(output, int) and isinstance(thoughts, int) else None,
            prompt,
            text,
        )
        if not text.strip():
            reason = _finish_reason(response)
            raise LLMError(self.name, f"model '{self.model}' returned an empty reply"
                           + (f" (finish reason {reason})" if reason else ""),
                           "try again; a safety block or token limit can cause this")
        return text

    def check(self) -> None:
        """The key is accepted and the model exists."""
        self._call(lambda: self._client.models.get(model=self.model))

    def _call(self, request: Any) -> Any:
        """Run one SDK call, turning every way it can fail into an LLMError that says what to check."""
        try:
            return request()
        except errors.APIError as e:
            raise self._status_error(e.code, str(e.message or e.details or "")) from None
        except TIMEOUT_ERRORS:
            raise LLMError(self.name, f"no answer from {self.where} within {self.timeout:g} s",
                           "raise the timeout in config.json or check GEMINI_BASE_URL") from None
        except TRANSPORT_ERRORS as e:
            raise LLMError(self.name, f"cannot reach {self.where}: {self._safe(type(e).__name__)}",
                           "check the network, or GEMINI_BASE_URL if you use a proxy") from None
        except (ValueError, TypeError) as e:  # a body that is not JSON, or not a Gemini response
            raise LLMError(self.name, f"unreadable answer from {self.where}: {self._safe(str(e))}",
                           "is GEMINI_BASE_URL really a Gemini API endpoint?") from None

    def _status_error(self, code: int, detail: str) -> LLMError:
        detail = self._safe(detail)
        if code in (401, 403) or (code == 400 and "api key" in detail.lower()):
            return LLMError(self.name, f"the API key was refused (HTTP {code}): {detail}",
                            "check GEMINI_API_KEY / GOOGLE_API_KEY")
        if code == 404:
            return LLMError(self.name, f"model '{self.model}' not found (HTTP 404): {detail}",
                            "check the model name in config.json")
        if code == 429:
            return LLMError(self.name, f"rate limited or out of quota (HTTP 429): {detail}",
                            "wait and retry, or check your quota")
        hint = "the service failed; try again later" if code >= 500 else "check the request and model"
        return LLMError(self.name, f"HTTP {code} from {self.where}: {detail}", hint)

    def _safe(self, text: str) -> str:
        return redact(text, self._key)


def _reply_text(response: Any) -> str:
    """The text parts of the first candidate, joined (thought parts skipped)."""
    candidates = getattr(response, "candidates", None) or []
    content = getattr(candidates[0], "content", None) if candidates else None
    parts = getattr(content, "parts", None) or []
    return "".join(p.text for p in parts if isinstance(getattr(p, "text", None), str) and not p.thought)


def _finish_reason(response: Any) -> str:
    candidates = getattr(response, "candidates", None) or []
    reason = getattr(candidates[0], "finish_reason", None) if candidates else None
    if reason is None:
        feedback = getattr(response, "prompt_feedback", None)
        reason = getattr(feedback, "block_reason", None)
    return str(getattr(reason, "value", reason) or "")
