"""The closed list the embedded model chooses from: the catalogue's actions, plus a few ways to
answer without acting. Each choice has a short label (a word a 135M model can match to the
owner's words far better than an action name), a flat "fill" schema the model completes, and a
function turning the filled values into the action's real params — checked afterwards against
the catalogue's own schema, like any model's action."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema

from agent.llm.local.about_me import statement_about_me
from agent.llm.local.message_values import (
    URL,
    URL_PARAMS,
    fill_schema,
    key_choice,
    memory_key,
    message_words,
    related_keys,
)
from agent.llm.turn import TurnRequest

# Answers that run no action; their wording comes from code (replies.py), not from the model.
WHO_AM_I, CAPABILITIES, RECALL, REFUSE, CHAT = "who", "abilities", "recall", "refuse", "chat"
ANSWERS = {
    WHO_AM_I: "say who you are",
    CAPABILITIES: "say what you can do",
    RECALL: "answer a question about the owner from memory",
    REFUSE: "refuse: the owner asks for a secret (password, key) or something harmful",
    CHAT: "small talk: a greeting, thanks, a general question",
}
# Catalogue actions with a label of their own; any other action is offered under its name in words.
ACTION_LABELS = {
    "CREATE_POST": ("post", "publish a new post"),
    "LIKE_POST": ("like", "like a post"),
    "DELETE_POST": ("delete", "delete one of your posts"),
    "GET_NOTIFICATIONS": ("notifications", "read your notifications"),
    "_MEMORY_WRITE": ("remember", "remember a fact about the owner"),
    "_MEMORY_FORGET": ("forget", "forget a fact about the owner"),
    "_BROWSER_VISION": ("open", "open a web page and summarise it"),
    "GET_PROFILE": ("profile", "read your own profile"),
    "SEARCH_POSTS": ("search", "search public posts"),
}
REPLY = "reply"  # CREATE_POST with reply_to: offered when the message holds a post's URL
# Named by the agent itself (a follow-up of _BROWSER_VISION), never chosen from the owner's words.
NOT_OFFERED = frozenset({"_LLM_SUMMARY"})

Params = dict[str, Any]


@dataclass(frozen=True)
class Intent:
    label: str
    action: str | None  # the catalogue action it runs; None: an answer
    description: str
    fill: dict[str, Any] | None = None  # the flat schema the model completes; None: nothing to fill
    to_params: Callable[[Params], Params] = dict


def label_of(action: str) -> str:
    return (
        ACTION_LABELS[action][0] if action in ACTION_LABELS else action.strip("_").lower().replace("_", " ")
    )


def describe(action: str, instructions: dict[str, str]) -> str:
    if action in ACTION_LABELS:
        return ACTION_LABELS[action][1]
    first = re.split(r"(?<=[.!?:])\s", instructions.get(action, action).strip(), maxsplit=1)[0]
    return first[:100]


# The words of a search request before what is searched for ("search bluesky for cats": cats).
SEARCH_REQUEST = re.compile(
    r"^\W*(please\s+)?(can you\s+)?(search|find|look for|look up)\s+(on\s+)?((bluesky|bsky)\s+)?"
    r"((public\s+)?posts?\s+)?((for|about|on|with)\s+)?", re.I)


def action_intent(action: str, schema: dict[str, Any], request: TurnRequest) -> Intent | None:
    properties = schema.get("properties") or {}
    required = [n for n in properties if n in set(schema.get("required", []))]
    fill = fill_schema(schema, required, request.user_message)
    if required and fill is None:
        return None  # a param that is not flat (nested) and no adapter: the model cannot fill it
    platform = properties.get("platform") or {}
    # A platform the action has a default for (a search: Bluesky) is named, so the reply says where.
    has_default = "platform" not in required and "default" in platform
    defaults = {"platform": platform["default"]} if has_default else {}

    def to_params(values: Params) -> Params:
        params = {**values, **{k: v for k, v in defaults.items() if k not in values}}
        if isinstance(params.get("query"), str):
            params["query"] = SEARCH_REQUEST.sub("", params["query"], count=1).strip() or params["query"]
        return params

    return Intent(label_of(action), action, describe(action, request.instructions), fill, to_params)


def memory_intents(request: TurnRequest) -> list[Intent]:
    words = message_words(request.user_message)
    keys = related_keys(sorted(request.memory), request.user_message)
    found = []
    if "_MEMORY_WRITE" in request.schemas and words:
        value = {"type": "string", "words": words, "max_words": 6}

        def write(values: Params) -> Params:
            stated = statement_about_me(request.user_message)  # "call me Sam": the key is the name
            if stated is not None:
                return {"new_memory": {stated[0]: stated[1]}}
            fact = values["is"].strip().rstrip(".!")
            return {"new_memory": {memory_key(request.user_message, fact): fact}}

        # Read as "my … is …": the model copies the fact's value into "is" far more reliably than
        # it names a key ("my" is filled but not used: memory_key takes the owner's own words).
        fill = {"type": "object", "properties": {"my": value, "is": value}, "required": ["my", "is"]}
        found.append(Intent("remember", "_MEMORY_WRITE", ACTION_LABELS["_MEMORY_WRITE"][1], fill, write))
    if "_MEMORY_FORGET" in request.schemas and keys:
        forget = ACTION_LABELS["_MEMORY_FORGET"][1]
        found.append(Intent("forget", "_MEMORY_FORGET", forget, key_choice(keys), forget_params))
    return found


def forget_params(values: Params) -> Params:
    return {"keys": [values["key"]]}


def reply_intent(request: TurnRequest) -> Intent | None:
    schema = request.schemas.get("CREATE_POST")
    if (
        not schema
        or "reply_to" not in (schema.get("properties") or {})
        or not URL.search(request.user_message)
    ):
        return None
    fill = fill_schema(schema, ["platform", "reply_to", "text"], request.user_message)
    return Intent(REPLY, "CREATE_POST", "reply to a post", fill) if fill else None


def offered_intents(request: TurnRequest) -> dict[str, Intent]:
    """Label -> what it does, for this message (URL and memory-dependent choices included)."""
    intents: list[Intent] = []
    for action, schema in request.schemas.items():
        if action in NOT_OFFERED or action in ("_MEMORY_WRITE", "_MEMORY_FORGET"):
            continue
        found = action_intent(action, schema, request)
        if found is not None:
            intents.append(found)
    intents += memory_intents(request)
    reply = reply_intent(request)
    if reply is not None:
        intents.append(reply)
    for label, description in ANSWERS.items():
        keys = related_keys(sorted(request.memory), request.user_message) if label == RECALL else []
        intents.append(Intent(label, None, description, key_choice(keys) if keys else None))
    return {intent.label: intent for intent in intents}


def listed_labels(schemas: dict[str, dict[str, Any]], instructions: dict[str, str]) -> list[tuple[str, str]]:
    """(label, what it is for) of every choice any message may get: the fixed prompt lists these."""
    example = TurnRequest("https://example.org example", schemas, instructions, {"example": "x"})
    return [(intent.label, intent.description) for intent in offered_intents(example).values()]


def needs_fill(intent: Intent, request: TurnRequest) -> bool:
    """An action whose params cannot be empty, with nothing to fill them with."""
    schema = request.schemas.get(intent.action or "")
    return schema is not None and jsonschema.Draft202012Validator(schema).is_valid({}) is False


def names_by_url(intent: Intent) -> bool:
    """It acts on a post or page that only a URL can name (a like, a delete, a reply, a page)."""
    return bool(set(URL_PARAMS) & set((intent.fill or {}).get("required", [])))


def can_fill(intent: Intent, request: TurnRequest) -> bool:
    """A choice whose values can come from this message: its fill schema exists (or it needs none),
    and a post or page it acts on is named by a URL in the message, never made up."""
    if intent.fill is None:
        return not needs_fill(intent, request)
    return not names_by_url(intent) or URL.search(request.user_message) is not None
