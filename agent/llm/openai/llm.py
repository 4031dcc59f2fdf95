"""OpenAI (or any OpenAI-compatible server) through the official `openai` client."""

from __future__ import annotations

from typing import Any

import openai

from agent.config.sections import LLMSettings
from agent.errors import LLMError
from agent.llm.base import BaseLLM
from agent.llm.redact import redact
from agent.llm.usage import usage_or_estimate

DEFAULT_MODEL = "gpt-4o-mini"
# Windows of OpenAI's models by name prefix (longest first wins); a compatible server's model not
# listed here gets UNKNOWN_WINDOW unless `llm.context_window` says otherwise.
KNOWN_WINDOWS = (
    ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000), ("o1", 200_000), ("o3", 200_000),
    ("o4", 200_000), ("gpt-5", 400_000), ("gpt-3.5-turbo", 16_385), ("gpt-4", 8_192),
)
UNKNOWN_WINDOW = 8192
# A local OpenAI-compatible server (llama.cpp, vLLM) usually ignores the key, but the SDK wants one.
KEYLESS_PLACEHOLDER = "not-needed"


class OpenAILLM(BaseLLM):
    name = "openai"

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings.model or DEFAULT_MODEL, settings.timeout)
        self.base_url = settings.openai_base_url or None
        self._key = settings.openai_api_key
        if not self._key and not self.base_url:
            raise LLMError(self.name, "OPENAI_API_KEY is not set",
                           "put it in .env, or set OPENAI_BASE_URL for a keyless compatible server")
        # max_retries=0: the SDK's own retry would send a second request the budget never checked
        # and the ledger never counted (after a timeout the first may have been billed). A failed
        # call is an error the caller sees, counted by MeteredLLM.
        self._client = openai.OpenAI(
            api_key=self._key or KEYLESS_PLACEHOLDER, base_url=self.base_url, timeout=self.timeout,
            max_retries=0,
        )
        self.where = self.base_url or "api.openai.com"
        self._window = settings.context_window

    def context_window(self) -> int:
        if self._window:
            return self._window
        known = [size for prefix, size in KNOWN_WINDOWS if self.model.startswith(prefix)]
        return known[0] if known and not self.base_url else UNKNOWN_WINDOW

    def chat(self, prompt: str) -> str:
        return self._complete(prompt)

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """Strict `response_format` json_schema at temperature 0."""
        response_format = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema,
                                                                  "strict": True}}
        return self._complete(prompt, response_format=response_format, temperature=0)

    def _complete(self, prompt: str, **options: Any) -> str:
        completion = self._call(
            lambda: self._client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], **options
            )
        )
        try:  # the SDK does not validate the body: `choices` may be any JSON a server sent
            text = completion.choices[0].message.content
        except (AttributeError, IndexError, KeyError, TypeError):
            raise LLMError(self.name, f"unreadable answer from {self.where}: no choices[0].message.content",
                           "is OPENAI_BASE_URL really an OpenAI-compatible server?") from None
        # The usage first: an empty reply is billed all the same (MeteredLLM counts it).
        usage = getattr(completion, "usage", None)
        self.last_usage = usage_or_estimate(
            getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None), prompt,
            text if isinstance(text, str) else "",
        )
        if not isinstance(text, str) or not text.strip():
            raise LLMError(self.name, f"model '{self.model}' returned an empty reply",
                           "try again; check the model's content filter or max tokens")
        return text

    def check(self) -> None:
        """The server answers with our key and knows the model."""
        self._call(lambda: self._client.models.retrieve(self.model))

    def _call(self, request: Any) -> Any:
        """Run one SDK call, turning every way it can fail into an LLMError that says what to check."""
        try:
            return request()
        except openai.APITimeoutError:
            raise LLMError(self.name, f"no answer from {self.where} within {self.timeout:g} s",
                           "raise the timeout in config.json or check OPENAI_BASE_URL") from None
        except openai.APIConnectionError:
            raise LLMError(self.name, f"cannot reach {self.where}",
                           "check the network, or OPENAI_BASE_URL if you use a compatible server") from None
        except openai.APIStatusError as e:
            raise self._status_error(e.status_code, _error_message(e)) from None
        except openai.OpenAIError as e:
            raise LLMError(self.name, f"unusable answer from {self.where}: {self._safe(str(e))}",
                           "check OPENAI_BASE_URL") from None
        except ValueError as e:  # a body that is not JSON (json.JSONDecodeError)
            raise LLMError(self.name, f"unreadable answer from {self.where}: {self._safe(str(e))}",
                           "is OPENAI_BASE_URL really an OpenAI-compatible server?") from None

    def _status_error(self, status: int, detail: str) -> LLMError:
        detail = self._safe(detail)
        if status == 401:
            return LLMError(self.name, f"the API key was refused (HTTP 401): {detail}",
                            "check OPENAI_API_KEY")
        if status == 404:
            return LLMError(self.name, f"model '{self.model}' not found (HTTP 404): {detail}",
                            "check the model name in config.json")
        if status == 429:
            return LLMError(self.name, f"rate limited or out of quota (HTTP 429): {detail}",
                            "wait and retry, or check your plan and billing")
        hint = "the service failed; try again later" if status >= 500 else "check the request and model"
        return LLMError(self.name, f"HTTP {status} from {self.where}: {detail}", hint)

    def _safe(self, text: str) -> str:
        return redact(text, self._key)


def _error_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return error.message
