"""A fake Gemini API (generateContent, models.get; API v1 and v1beta) for the `google-genai` client."""

from __future__ import annotations

from typing import Any

from tests.support.fake_ollama import Failure, ScriptedJSONServer

__all__ = ["Failure", "FakeGemini"]

_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class FakeGemini(ScriptedJSONServer):
    """Set GEMINI_BASE_URL to `fake.url`; the client adds /{v1|v1beta}/models/{model}:generateContent."""

    def __init__(self, models: tuple[str, ...] = ("gemini-2.5-flash",)) -> None:
        super().__init__()
        self.models = list(models)

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}}

    def server_error(self) -> Failure:
        return Failure(500, self.error_body(500, "An internal error has occurred."))

    def unauthorized(self) -> Failure:
        return Failure(401, self.error_body(401, "Request had invalid authentication credentials."))

    def model_not_found(self, model: str) -> Failure:
        message = (f"models/{model} is not found for API version v1beta, "
                   "or is not supported for generateContent.")
        return Failure(404, self.error_body(404, message))

    def rate_limited(self) -> Failure:
        return Failure(429, self.error_body(429, "Resource has been exhausted (e.g. check quota)."))

    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        prefix = next((p for p in ("/v1beta/models/", "/v1/models/") if path.startswith(p)), None)
        if prefix is None:
            return 404, self.error_body(404, f"Invalid path {path}")
        model, _, verb = path.removeprefix(prefix).partition(":")
        if method == "GET" and not verb:
            if model not in self.models:
                failure = self.model_not_found(model)
                return failure.status, failure.body
            return self.serve(self._queue.always or "", _model(model))
        if method == "POST" and verb == "generateContent":
            item = self.next_item()
            if not isinstance(item, Failure) and model not in self.models:
                item = self.model_not_found(model)
            return self.serve(item, _generation(model, item, self.output_tokens))
        return 404, self.error_body(404, f"Invalid path {path}")


def _model(model: str) -> dict[str, Any]:
    return {
        "name": f"models/{model}",
        "version": "001",
        "displayName": model,
        "description": "A fake Gemini model.",
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
        "temperature": 1.0,
        "topP": 0.95,
        "topK": 64,
    }


def _generation(model: str, item: str | Failure, output_tokens: int = 5) -> dict[str, Any]:
    text = item if isinstance(item, str) else "fake reply"
    return {
        "candidates": [
            {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": output_tokens,
                          "totalTokenCount": 10 + output_tokens},
        "modelVersion": model,
        "responseId": "fake-response-0001",
    }
