"""The embedded model's prompt as chat turns: PROMPT_local.md is written in turns (`<|system|>`,
`<|user|>`, `<|assistant|>` at line starts), and its system turn is SafeClaw's persona."""

from __future__ import annotations

import re

DEFAULT_PERSONA = "You are SafeClaw, a personal AI agent that acts on the social web for one owner."
TURN_MARKER = re.compile(r"^<\|(system|user|assistant)\|>[ \t]*\n?", re.MULTILINE)


def split_turns(prompt: str) -> list[dict[str, str]]:
    """Chat messages from a prompt written in turns: a tiny model follows worked examples far
    better as real prior turns. Outside text cannot forge a marker: the prompt builder neutralises
    them in it. A prompt without markers is one user message."""
    parts = TURN_MARKER.split(prompt)
    if len(parts) == 1:
        return [{"role": "user", "content": prompt}]
    messages = [{"role": "user", "content": parts[0].strip()}] if parts[0].strip() else []
    for role, content in zip(parts[1::2], parts[2::2], strict=True):
        messages.append({"role": role, "content": content.strip()})
    return messages


def persona_of(prompt: str) -> str:
    """The system turn of PROMPT_local.md: SafeClaw's identity, as the owner may have edited it."""
    first = split_turns(prompt)[0]
    return first["content"] if first["role"] == "system" else DEFAULT_PERSONA
