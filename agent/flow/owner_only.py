"""The owner-only values a sink's bytes are searched for, and the search.

Owner-only: what memory holds (unless the owner made the entry public) and the secret-like
tokens (a run of letters and digits holding a digit, 4 characters or more: a PIN, a door code,
a phone number) of the owner's own messages. Labels are as fine as a value: what the owner said
does not make every later word owner-only, only these values.

The search reads a sink's text as a server would receive it, several ways: URL-decoded (up to
three times), case and width folded, without separators ("4 8-2.1" is 4821), and the base64, base32
or hex spelling of any long token decoded, so that a value cannot leave in another spelling. These
are the spellings a URL or a query carries on its own; an address the model composed in a turn that
read outside text could spell a value any way at all, and is refused by construction instead
(`agent.flow.sinks`: only addresses and names the owner or the prompt wrote as they are).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

MIN_CHARS = 4  # a shorter value (a cat called Tom) matches too much to be a secret
SHORT_WORDS = 6  # a value without digits shorter than this must match whole words
TOKEN = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")  # a run of letters and digits, `.` and `-` inside
# A token that may be a base64, base32 or hex spelling: its alphabet, `=` only as its padding (a
# query's `ctx=` is not part of the token after it), 6 characters or more (4 bytes in base64).
_ENCODED = re.compile(r"[A-Za-z0-9+/_-]{6,}={0,6}")
_WORD = re.compile(r"[^\W_]+")


def squeezed(text: str) -> str:
    """Letters and digits only, folded: the form two spellings of one value share."""
    return "".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@dataclass(frozen=True)
class Needle:
    value: str  # squeezed
    where: str  # what it is, for the owner ("memory 'bank_pin'")
    digits: bool


def secret_like(token: str) -> bool:
    """A PIN, a code, a phone number: 4 or more letters and digits, holding a digit."""
    value = squeezed(token)
    return len(value) >= MIN_CHARS and any(c.isdigit() for c in value)


def needles_of(text: str, where: str, whole: bool) -> list[Needle]:
    """The parts of `text` that are owner-only: each secret-like token, and the whole value."""
    found = []
    for token in TOKEN.findall(text):
        if secret_like(token):
            found.append(Needle(squeezed(token), where, True))
    value = squeezed(text)
    if whole and len(value) >= MIN_CHARS:
        found.append(Needle(value, where, any(c.isdigit() for c in value)))
    return found


def memory_needles(memory: dict[str, Any]) -> list[Needle]:
    """The owner-only values of memory: every entry the owner did not make public."""
    needles: list[Needle] = []
    for key, entry in memory.items():
        if isinstance(entry, dict) and entry.get("public") is True:
            continue
        value = entry.get("value") if isinstance(entry, dict) and "value" in entry else entry
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        needles += needles_of(text, f"your memory '{str(key)[:64]}'", whole=True)
    return needles


class OwnerOnly:
    """The owner-only values of one turn, and where a text carries one."""

    def __init__(self, needles: Iterable[Needle]) -> None:
        self.needles = list({n.value: n for n in needles}.values())

    @classmethod
    def of(
        cls, memory: dict[str, Any], owner_messages: Iterable[str], in_memory: list[Needle] | None = None
    ) -> OwnerOnly:
        """`in_memory`: `memory_needles(memory)`, when the caller keeps them (memory unchanged)."""
        needles = list(memory_needles(memory) if in_memory is None else in_memory)
        for message in owner_messages:
            needles += needles_of(message, "your own messages", whole=False)
        return cls(needles)

    def carried(self, text: str) -> list[Needle]:
        """The owner-only values `text` carries, in any of the spellings it is read as."""
        if not self.needles or not text:
            return []
        readings = spellings(text)
        flat = " ".join(squeezed(r) for r in readings)
        words = {w for r in readings for w in _WORD.findall(unicodedata.normalize("NFKC", r).casefold())}
        return [n for n in self.needles if n.value in flat and (n.digits or len(n.value) >= SHORT_WORDS
                                                                  or n.value in words)]


def spellings(text: str) -> list[str]:
    """`text`, URL-decoded up to three times, and the decoded base64 and hex tokens of each."""
    readings = [text[:20_000]]
    for _ in range(3):
        decoded = unquote_plus(readings[-1])
        if decoded == readings[-1]:
            break
        readings.append(decoded)
    for reading in list(readings):
        readings += [d for token in _ENCODED.findall(reading) if (d := decoded_token(token))]
    return readings


def decoded_token(token: str) -> str:
    for decode in (_from_hex, _from_base64, _from_base32):
        try:
            raw = decode(token)
        except (binascii.Error, ValueError):
            continue
        text = raw.decode("utf-8", "ignore")
        if text and sum(c.isprintable() for c in text) >= 0.9 * len(text):
            return text
    return ""


def _from_hex(token: str) -> bytes:
    return bytes.fromhex(token)


def _from_base32(token: str) -> bytes:
    stripped = token.rstrip("=").upper()
    return base64.b32decode(stripped + "=" * (-len(stripped) % 8))


def _from_base64(token: str) -> bytes:
    padded = token + "=" * (-len(token) % 4)
    return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
