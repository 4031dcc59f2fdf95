"""llama.cpp grammars (GBNF) that only let real labels and real parameter shapes come out.

Written here rather than with llama_cpp's JSON-schema converter: the fill schemas are flat
objects, and the converter unrolls every maxLength into thousands of nested rules. Lengths and
patterns are checked afterwards by the same jsonschema validation every action goes through.
"""

from __future__ import annotations

import json
from typing import Any

# A JSON string's characters without quote, backslash or control characters: a small model
# never needs an escape, and a newline in a post is not worth a broken object.
STRING = r'"\"" [^"\\\x00-\x1f]+ "\""'
INTEGER = "[1-9] [0-9]?"


def literal(text: str) -> str:
    """A GBNF string literal (JSON's escapes are GBNF's)."""
    return json.dumps(text)


def label_grammar(labels: list[str]) -> str:
    """Exactly one of `labels`."""
    if not labels:
        raise ValueError("no labels to choose from")
    return "root ::= " + " | ".join(literal(label) for label in labels) + "\n"


def phrase_rule(words: list[str], max_words: int) -> str:
    """A JSON string made only of the message's own words (so a value is copied, never invented)."""
    word = "(" + " | ".join(literal(w) for w in words) + ")"
    return f'"\\"" {word} (" " {word}){{0,{max_words - 1}}} "\\""'


def value_rule(schema: dict[str, Any]) -> str:
    if schema.get("words"):
        return phrase_rule(schema["words"], int(schema.get("max_words", 8)))
    if "enum" in schema:
        return "(" + " | ".join(literal(json.dumps(v)) for v in schema["enum"]) + ")"
    kind = schema.get("type")
    if kind == "string":
        return "string"
    if kind == "integer":
        return "integer"
    raise ValueError(f"no grammar for a {kind!r} parameter")


def object_grammar(schema: dict[str, Any]) -> str:
    """A flat JSON object: the required properties in order, then each optional one or not."""
    properties: dict[str, dict[str, Any]] = schema.get("properties") or {}
    required = [name for name in properties if name in set(schema.get("required", []))]
    optional = [name for name in properties if name not in required]
    if not required:
        raise ValueError("a fill schema needs at least one required property")

    def pair(name: str) -> str:
        return f'{literal(json.dumps(name))} ": " {value_rule(properties[name])}'

    body = ' ", " '.join(pair(name) for name in required)
    body += "".join(f' (", " {pair(name)})?' for name in optional)
    return f'root ::= "{{" {body} "}}"\nstring ::= {STRING}\ninteger ::= {INTEGER}\n'
