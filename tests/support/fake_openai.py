"""A fake OpenAI API (POST /v1/chat/completions, GET /v1/models[/{id}]) for the official client."""

from __future__ import annotations

from typing import Any

from tests.support.fake_ollama import Failure, ScriptedJSONServer

__all__ = ["Failure", "FakeOpenAI"]


class FakeOpenAI(ScriptedJSONServer):
    """Point the client at `fake.base_url` (which ends in /v1, as OPENAI_BASE_URL does)."""

    def __init__(self, models: tuple[str, ...] = ("gpt-4o-mini",)) -> None:
        super().__init__()
        self.models = list(models)

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def error_body(self, status: int, message: str, code: str | None = None) -> Any:
        kinds = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}
        kind = kinds.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def server_error(self) -> Failure:
        return Failure(500, self.error_body(500, "The server had an error while processing your request."))

    def unauthorized(self, shown_key: str = "sk-...") -> Failure:
        message = f"Incorrect API key provided: {shown_key}. You can find your API key at https://platform.openai.com."
        return Failure(401, self.error_body(401, message, "invalid_api_key"))

    def model_not_found(self, model: str) -> Failure:
        message = f"The model `{model}` does not exist or you do not have access to it."
        return Failure(404, self.error_body(404, message, "model_not_found"))

    def rate_limited(self) -> Failure:
        return Failure(429, self.error_body(429, "Rate limit reached for requests", "rate_limit_exceeded"))

    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [_model(m) for m in self.models]}
        if method == "GET" and path.startswith("/v1/models/"):
            model = path.removeprefix("/v1/models/")
            if self.models and model not in self.models:
                return self.model_not_found(model).status, self.model_not_found(model).body
            return self.serve(self._pending_failure(), _model(model))
        if method == "POST" and path == "/v1/chat/completions":
            model = (body or {}).get("model", "")
            item = self.next_item()
            if not isinstance(item, Failure) and model not in self.models:
                item = self.model_not_found(model)
            return self.serve(item, _completion(model, item, self.output_tokens))
        return 404, self.error_body(404, f"Invalid URL ({method} {path})")

    def _pending_failure(self) -> str | Failure:
        """Metadata requests fail only under `fail_always`; they do not consume queued replies."""
        return self._queue.always or ""


def _model(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 1700000000, "owned_by": "system"}


def _completion(model: str, item: str | Failure, output_tokens: int = 5) -> dict[str, Any]:
    text = item if isinstance(item, str) else "fake reply"
    return {
        "id": "chatcmpl-fake0001",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": output_tokens, "total_tokens": 10 + output_tokens},
        "system_fingerprint": "fp_fake",
    }
