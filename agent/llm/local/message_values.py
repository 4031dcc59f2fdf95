"""What the owner's message gives an embedded model's choice to be filled with: its URLs, quoted
texts, words, named platforms and memory keys, and the flat "fill" schema built from them. A value
the model writes comes out of this schema, so it can only be something the message holds (or the
catalogue's own enum)."""

from __future__ import annotations

import re
from typing import Any

from agent.commands.parse import platform_of_post
from agent.llm.local.about_me import kin_keys

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


COMMON_WORDS = frozenset(
    {"a", "an", "the", "my", "your", "i", "me", "you", "is", "are", "of", "to", "in", "on"}
)
QUESTION_WORDS = frozenset({"what", "which", "who", "where", "when", "how", "do", "does", "did", "am"})


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
# "reply to <link> saying congrats!": the words that follow a post's link and "saying"
AFTER_SAYING = re.compile(r"(?:https?|at)://\S+\s+(?:saying|to say|that says|and say)\s+(\S.{0,299}?)\s*$",
                          re.I | re.S)


def given_texts(message: str) -> list[str]:
    """The texts the owner gives to be published as they are: in quotes, or after a colon that
    ends the request ("Post on mastodon: Good morning"), or after a post's link and "saying". None:
    the owner asks for a text to be written."""
    quoted = list(dict.fromkeys(QUOTED.findall(message)))
    if quoted:
        return quoted
    after = AFTER_COLON.search(URL.sub(" ", message)) or AFTER_SAYING.search(message)
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


def related_keys(keys: list[str], message: str) -> list[str]:
    """Memory keys sharing a word with the message (besides "my", "the"…): a fact is forgotten or
    recalled only when the message names it, never one picked from the rest."""
    words = {w.lower() for w in message_words(message)} - COMMON_WORDS
    words |= kin_keys(words)  # "where do I live?" asks for the city
    words -= COMMON_WORDS | QUESTION_WORDS  # "where am I from?" is not about "where I live"
    return [key for key in keys if words & {part.lower() for part in key.split()}]


def key_choice(keys: list[str]) -> dict[str, Any]:
    """The fill schema of a choice that names one of these memory keys."""
    return {"type": "object", "properties": {"key": {"type": "string", "enum": keys}}, "required": ["key"]}


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


LEADING = re.compile(r"^(please\s+)?(remember|note|keep in mind)\b[:,]?(\s+that)?\s*(my\s+)?", re.I)
TRAILING = re.compile(r"\s+(is|are|was|=|:|is called|is named|are called)$", re.I)


def memory_key(message: str, value: str) -> str:
    """KEY RULE (no model): the key of a fact is the owner's words before its value, without
    "remember that my" and "is". The 135M model finds the value well but not the key."""
    at = message.lower().rfind(value.lower())
    before = message[:at] if at > 0 else message
    key = TRAILING.sub("", LEADING.sub("", before.strip().rstrip(":=,"))).strip()
    return key[:64] or value[:64]
