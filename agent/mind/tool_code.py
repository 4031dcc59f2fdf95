"""Parsing the LLM's reply: `<message><tool_code>[{"name": ..., "params": {...}}]</tool_code>`.

Anything malformed raises `ToolCodeError` with a message written for the LLM, which sees it
as an observation and gets a bounded number of retries.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from agent.errors import ToolCodeError

OPEN_TAG = re.compile(r"<\s*tool_code\s*>", re.IGNORECASE)
CLOSE_TAG = re.compile(r"<\s*/\s*tool_code\s*>", re.IGNORECASE)
CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
MAX_ACTIONS = 8


@dataclass
class Action:
    name: str
    params: dict[str, Any]


@dataclass
class ParsedReply:
    message: str  # the text outside the tool_code block, shown to the user
    actions: list[Action] = field(default_factory=list)


def parse_reply(raw: str, schemas: dict[str, dict[str, Any]]) -> ParsedReply:
    """Split the reply into message and actions; validate each action against `schemas`."""
    opens = list(OPEN_TAG.finditer(raw))
    if not opens:
        if CLOSE_TAG.search(raw):
            raise ToolCodeError("found </tool_code> without an opening <tool_code> tag")
        return ParsedReply(message=raw.strip())
    message_parts = [raw[: opens[0].start()]]
    actions: list[Action] = []
    position = 0
    for opening in opens:
        if opening.start() < position:
            raise ToolCodeError("a <tool_code> block is nested inside another")
        closing = CLOSE_TAG.search(raw, opening.end())
        if closing is None:
            raise ToolCodeError("<tool_code> is not closed with </tool_code>")
        if position:
            message_parts.append(raw[position : opening.start()])
        actions.extend(parse_actions(raw[opening.end() : closing.start()], schemas))
        position = closing.end()
    message_parts.append(raw[position:])
    if len(actions) > MAX_ACTIONS:
        raise ToolCodeError(f"too many actions ({len(actions)}); send at most {MAX_ACTIONS} at once")
    message = " ".join(part.strip() for part in message_parts if part.strip())
    return ParsedReply(message=message, actions=actions)


BARE_KEY = re.compile(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:")
SINGLE_QUOTED = re.compile(r"'([^'\"\\]*)'")


def load_json_leniently(text: str) -> Any:
    """JSON, forgiving the two slips small models make most: bare keys and single quotes."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as first_error:
        repaired = BARE_KEY.sub(r'\1"\2":', SINGLE_QUOTED.sub(r'"\1"', text))
        try:
            return json.loads(repaired)
        except json.JSONDecodeError:
            raise first_error from None


def parse_actions(block: str, schemas: dict[str, dict[str, Any]]) -> list[Action]:
    text = CODE_FENCE.sub("", block.strip())
    try:
        data = load_json_leniently(text)
    except json.JSONDecodeError as exc:
        raise ToolCodeError(f"the tool_code block is not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise ToolCodeError("the tool_code block is nested too deeply") from None
    if not isinstance(data, list):
        raise ToolCodeError('the tool_code block must be a JSON list: [{"name": ..., "params": {...}}]')
    return [parse_action(item, index, schemas) for index, item in enumerate(data)]


def parse_action(item: Any, index: int, schemas: dict[str, dict[str, Any]]) -> Action:
    where = f"action {index + 1}"
    if not isinstance(item, dict):
        raise ToolCodeError(f"{where} must be an object with 'name' and 'params'")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCodeError(f"{where} has no 'name'")
    if name not in schemas and f"_{name}" in schemas:
        name = f"_{name}"  # small models drop the leading underscore of local actions
    if name not in schemas:
        known = ", ".join(sorted(schemas))
        raise ToolCodeError(f"{where}: unknown action {name!r}; known actions: {known}")
    if "params" not in item:
        raise ToolCodeError(f"{where} ({name}) has no 'params' object")
    params = item["params"]
    if not isinstance(params, dict):
        raise ToolCodeError(f"{where} ({name}): 'params' must be an object")
    unexpected = set(item) - {"name", "params"}
    if unexpected:
        raise ToolCodeError(f"{where} ({name}) has unexpected fields: {', '.join(sorted(unexpected))}")
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schemas[name]).iter_errors(params)
    )
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path) or "params"
        raise ToolCodeError(f"{where} ({name}): {path}: {error.message}"[:400])
    return Action(name=name, params=params)
