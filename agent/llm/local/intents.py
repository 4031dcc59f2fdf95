"""The closed list the embedded model chooses from: the catalogue's actions, plus a few ways to
answer without acting. Each choice has a short label (a word a 135M model can match to the
owner's words far better than an action name), a flat "fill" schema the model completes, and a
function turning the filled values into the action's real params — checked afterwards against
the catalogue's own schema, like any model's action."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema

from agent.commands.parse import platform_of_post
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
URL = re.compile(r"(?:https?|at)://[^\s\"'<>]+[^\s\"'<>.,;:!?)]")
QUOTED = re.compile(r"[\"“”']([^\"“”']{1,300})[\"“”']")
URL_PARAMS = ("url", "post_id", "reply_to")
PLATFORM_WORDS = {
    "bsky": {"bsky", "bluesky"},
    "mastodon": {"mastodon", "toot", "fediverse"},
    "reddit": {"reddit", "subreddit"},
    "x": {"x", "twitter", "tweet"},
    "moltbook": {"moltbook", "submolt"},
}

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


def value_schema(name: str, spec: dict[str, Any], message: str) -> dict[str, Any] | None:
    """A param's schema for the fill grammar: the catalogue's enum, the message's URLs for a URL
    param, its quoted text for a text param when it quotes some; None when it cannot be flat."""
    if "enum" in spec:
        return {"type": "string", "enum": list(spec["enum"])}
    if spec.get("type") not in ("string", "integer"):
        return None
    if name in URL_PARAMS and URL.search(message):
        return {"type": "string", "enum": list(dict.fromkeys(URL.findall(message)))}
    if name == "text":  # the owner's own words, given as such: the embedded model writes no text
        given = given_texts(message)
        return {"type": "string", "enum": given} if given else None
    if spec["type"] == "string" and message_words(message):
        return {"type": "string", "words": message_words(message), "max_words": 40 if name == "text" else 8}
    return {"type": spec["type"]}


AFTER_COLON = re.compile(r":\s+(\S.{0,299}?)\s*$", re.S)


def given_texts(message: str) -> list[str]:
    """The texts the owner gives to be published as they are: in quotes, or after a colon that
    ends the request ("Post on mastodon: Good morning"). None: the owner asks for a text to be written."""
    quoted = list(dict.fromkeys(QUOTED.findall(message)))
    if quoted:
        return quoted
    after = AFTER_COLON.search(URL.sub(" ", message))
    return [after.group(1)] if after else []


def message_words(message: str) -> list[str]:
    """The words of the message, as written and without the punctuation around them: the only
    words a free-text value may be made of (grammar.phrase_rule)."""
    found: list[str] = []
    for raw in message.replace('"', " ").replace("\\", " ").split():
        for word in (raw, raw.strip(".,;:!?()[]'“”‘’")):
            if word and word not in found:
                found.append(word)
    return found


def named_platforms(message: str, allowed: list[str]) -> list[str]:
    """The platforms the message names by a word of its own (Bluesky, toot, tweet…), in catalogue order.
    Not a choice of action: it only narrows which platform values the grammar lets out."""
    words = {w.lower().strip(".,;:!?'\"") for w in message.split()}
    return [p for p in allowed if words & PLATFORM_WORDS.get(p, {p})]


COMMON_WORDS = frozenset(
    {"a", "an", "the", "my", "your", "i", "me", "you", "is", "are", "of", "to", "in", "on"}
)


# Words that say nothing about which action is meant: function words, the platforms' names (a
# platform is named for any action), and verbs used for every action alike.
NOT_EVIDENCE = COMMON_WORDS | frozenset(
    {"and", "or", "for", "with", "about", "from", "at", "by", "it", "this", "that", "one", "own", "new",
     "some", "any", "all", "please", "can", "could", "would", "will", "do", "does", "what", "whats",
     "read", "get", "show", "see", "check", "make", "write", "put", "give", "tell", "find", "send",
     "platform", "social", "account", "returns", "id"}
) | frozenset(word for words in PLATFORM_WORDS.values() for word in words)


def content_words(text: str) -> set[str]:
    """The words of `text` that can say what is meant: lower case, no plural s, not in NOT_EVIDENCE."""
    words = {w.lower().strip(".,;:!?()[]'“”‘’\"").replace("'", "") for w in re.split(r"[\s_/-]+", text)}
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w and w not in NOT_EVIDENCE}


def asked_for(intents: dict[str, Intent], request: TurnRequest) -> set[str]:
    """The labels of the actions the message itself points at: it names the post or page the
    action works on by its URL, or shares a word with the action's name, label or description
    that at most two actions have ("post" is in most of them, "feed" in one). An action the
    message gives no sign of is never offered (a poem request once ran MOLTBOOK_FEED)."""
    said = content_words(URL.sub(" ", request.user_message))
    catalogue = {
        action: content_words(f"{label_of(action)} {describe(action, request.instructions)} {action}")
        for action in request.schemas
    }
    shared_by = Counter(word for words in catalogue.values() for word in words)
    pointed = {
        label
        for label, intent in intents.items()
        if intent.action in catalogue
        and not names_by_url(intent)
        and any(shared_by[word] <= 2 for word in catalogue[intent.action] & said)
    }
    if URL.search(request.user_message):
        pointed |= {label for label, intent in intents.items() if intent.action and names_by_url(intent)}
    return pointed


def related_keys(keys: list[str], message: str) -> list[str]:
    """Memory keys sharing a word with the message (besides "my", "the"…): a fact is forgotten or
    recalled only when the message names it, never one picked from the rest."""
    words = {w.lower() for w in message_words(message)} - COMMON_WORDS
    return [key for key in keys if words & {part.lower() for part in key.split()}]


def fill_schema(schema: dict[str, Any], names: list[str], message: str) -> dict[str, Any] | None:
    properties = schema.get("properties") or {}
    kept = {}
    for name in names:
        value = value_schema(name, properties[name], message)
        if value is None:
            return None
        kept[name] = value
    if "platform" in kept and "enum" in kept["platform"]:
        named = named_platforms(message, kept["platform"]["enum"])
        if named:
            kept["platform"] = {"type": "string", "enum": named}
    # A post named by its URL lives on the URL's platform: only that one may come out.
    urls = URL.findall(message) if {"post_id", "reply_to"} & set(names) else []
    platforms = [platform_of_post(url) for url in urls]
    if "platform" in kept and urls and all(platforms):
        allowed = [p for p in kept["platform"].get("enum", []) if p in platforms]
        if allowed:
            kept["platform"] = {"type": "string", "enum": allowed}
    return {"type": "object", "properties": kept, "required": names} if kept else None


def action_intent(action: str, schema: dict[str, Any], request: TurnRequest) -> Intent | None:
    required = [n for n in (schema.get("properties") or {}) if n in set(schema.get("required", []))]
    fill = fill_schema(schema, required, request.user_message)
    if required and fill is None:
        return None  # a param that is not flat (nested) and no adapter: the model cannot fill it
    return Intent(label_of(action), action, describe(action, request.instructions), fill)


LEADING = re.compile(r"^(please\s+)?(remember|note|keep in mind)\b[:,]?(\s+that)?\s*(my\s+)?", re.I)
TRAILING = re.compile(r"\s+(is|are|was|=|:|is called|is named|are called)$", re.I)


def memory_key(message: str, value: str) -> str:
    """KEY RULE (no model): the key of a fact is the owner's words before its value, without
    "remember that my" and "is". The 135M model finds the value well but not the key."""
    at = message.lower().rfind(value.lower())
    before = message[:at] if at > 0 else message
    key = TRAILING.sub("", LEADING.sub("", before.strip().rstrip(":=,"))).strip()
    return key[:64] or value[:64]


def memory_intents(request: TurnRequest) -> list[Intent]:
    words = message_words(request.user_message)
    keys = related_keys(sorted(request.memory), request.user_message)
    found = []
    if "_MEMORY_WRITE" in request.schemas and words:
        value = {"type": "string", "words": words, "max_words": 6}

        def write(values: Params) -> Params:
            fact = values["is"].strip().rstrip(".!")
            return {"new_memory": {memory_key(request.user_message, fact): fact}}

        # Read as "my … is …": the model copies the fact's value into "is" far more reliably than
        # it names a key ("my" is filled but not used: memory_key takes the owner's own words).
        fill = {"type": "object", "properties": {"my": value, "is": value}, "required": ["my", "is"]}
        found.append(Intent("remember", "_MEMORY_WRITE", ACTION_LABELS["_MEMORY_WRITE"][1], fill, write))
    if "_MEMORY_FORGET" in request.schemas and keys:
        found.append(
            Intent(
                "forget",
                "_MEMORY_FORGET",
                ACTION_LABELS["_MEMORY_FORGET"][1],
                {
                    "type": "object",
                    "properties": {"key": {"type": "string", "enum": keys}},
                    "required": ["key"],
                },
                lambda v: {"keys": [v["key"]]},
            )
        )
    return found


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
        fill = None
        keys = related_keys(sorted(request.memory), request.user_message) if label == RECALL else []
        if keys:
            fill = {
                "type": "object",
                "properties": {"key": {"type": "string", "enum": keys}},
                "required": ["key"],
            }
        intents.append(Intent(label, None, description, fill))
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
