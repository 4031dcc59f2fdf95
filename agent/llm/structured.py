"""Structured output: one JSON object that matches a JSON Schema, asked for at temperature 0.

Each provider asks in its own native JSON mode (OpenAI `response_format` json_schema, Ollama
`format`, Gemini `response_schema`, a llama.cpp grammar); the answer is checked here the same
way for all of them, so a provider that ignores its JSON mode still cannot hand back junk.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from agent.errors import LLMError

# Keys of JSON Schema that Gemini's response_schema (an OpenAPI 3.0 subset) does not accept.
_GEMINI_UNSUPPORTED = ("additionalProperties", "$schema", "title", "default")


def parse_structured(provider: str, text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON object in `text`, validated against `schema`; LLMError when it is not one."""
    body = text.strip()
    if body.startswith("```"):  # some servers wrap JSON mode answers in a code fence anyway
        body = body.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(body)
    except ValueError:
        raise LLMError(
            provider,
            f"the structured answer is not JSON: {text[:120]!r}",
            "the model ignored its JSON mode; try again or use another model",
        ) from None
    if not isinstance(value, dict):
        raise LLMError(provider, "the structured answer is not a JSON object", "try again")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "answer"
        raise LLMError(
            provider,
            f"the structured answer does not match its schema ({where}: {error.message[:160]})",
            "try again or use another model",
        )
    return value


def gemini_schema(schema: Any) -> Any:
    """`schema` without the keys Gemini's response_schema refuses (recursively)."""
    if isinstance(schema, dict):
        return {k: gemini_schema(v) for k, v in schema.items() if k not in _GEMINI_UNSUPPORTED}
    if isinstance(schema, list):
        return [gemini_schema(v) for v in schema]
    return schema
