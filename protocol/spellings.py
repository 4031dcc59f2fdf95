"""Text folded for reading: escapes undone and look-alike letters made ASCII. The injection
detector reads outside text so (a prompt hidden in `%69gnore` or in full-width letters is still
read as one), and a setting's name is folded so before it is compared (`protocol.env_files`).

- escapes undone until none is left: URL `%2f`/`%252F`, HTML `&#47`/`&#x2F;`/`&amp;`,
  JSON/Python `\\u002f`/`\\x2f`/`\\/`, `0x` before hex bytes; `+` read as the space it encodes;
- folded: full-width and mathematical letters, Cyrillic/Greek look-alikes and other digits become
  ASCII, zero-width characters, soft hyphens and combining marks are dropped.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Callable

# Look-alikes NFKD leaves alone (Cyrillic, Greek, Armenian, Latin extensions) -> the ASCII they mimic.
CONFUSABLES = dict(
    zip(
        "аеіјорѕсухкԁһӏԛԝɡвтмнАВЕЅІЈКМНОРСТУХҮԚԜЗαοινρτυκχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧօսհոցզıȷɑᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ",
        "aeijopscyxkdhlqwgBTMHABESIJKMHOPCTYXYQW3aoivptukxeABEZHIKMNOPTYXouhngqijaABCDEFGHIJKLMNOPQRSTUVWYZ",
        strict=True,
    )
)
# Letters NFKD does not decompose: invisible tag characters (U+E0020..), regional indicators and
# negative circled or squared letters; each range starts at A (or, for tags, at space).
_LETTER_RANGES = (
    (0xE0020, 0xE007E, 0x20),
    (0x1F1E6, 0x1F1FF, 0x41),
    (0x1F150, 0x1F169, 0x41),
    (0x1F170, 0x1F189, 0x41),
)
_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf"})  # combining marks, zero-width and format characters


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One non-ASCII character as the ASCII it stands for, '' when invisible, else itself."""
    if char in CONFUSABLES:
        return CONFUSABLES[char]
    code = ord(char)
    for first, last, ascii_first in _LETTER_RANGES:
        if first <= code <= last:
            return chr(ascii_first + code - first)
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    parts = [CONFUSABLES.get(c, c) for c in unicodedata.normalize("NFKD", char)]
    return "".join(c for c in parts if unicodedata.category(c) not in _DROPPED_CATEGORIES)


Replacement = str | Callable[[re.Match[str]], str]  # a str holds no backslash


def _bytes_text(match: re.Match[str], marker: str) -> str:
    """A run of escaped bytes as its text; left alone when it is not UTF-8."""
    try:
        return bytes.fromhex(match.group().replace(marker, "")).decode("utf-8")
    except UnicodeDecodeError:
        return match.group()


_CODE_UNIT = re.compile(r"[0-9A-Fa-f]{4,8}|(?<=\{)[0-9A-Fa-f]{1,6}")


def _code_units(match: re.Match[str]) -> str:
    units = "".join(chr(int(h, 16)) for h in _CODE_UNIT.findall(match.group()))
    return units.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# (what the text must hold for it to apply, the escape, what it stands for)
_Escape = tuple[tuple[str, ...], re.Pattern[str], Replacement]
_ESCAPES: tuple[_Escape, ...] = (
    (("%",), re.compile(r"(?:%[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m, "%")),
    (("%", "\\u{"), re.compile(r"(?:%[uU][0-9A-Fa-f]{4})+|\\u\{[0-9A-Fa-f]{1,6}\}"), _code_units),
    (
        ("&",),
        re.compile(r"&(?:#[0-9]{1,10}|#[xX][0-9A-Fa-f]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});?"),
        lambda m: html.unescape(m.group()),
    ),
    # Two backslashes are one, before the escapes they may hide (JSON of JSON).
    (("\\\\",), re.compile(r"\\\\"), lambda m: "\\"),
    (("\\",), re.compile(r"\\U[0-9A-Fa-f]{8}|(?:\\[uU][0-9A-Fa-f]{4})+"), _code_units),
    (("\\",), re.compile(r"(?:\\x[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m, "\\x")),
    (("\\",), re.compile(r"\\[nrt]"), " "),
    (("\\",), re.compile(r"\\([/\"'])"), lambda m: m.group(1)),
    (("0x", "0X"), re.compile(r"0[xX](?=[0-9A-Fa-f]{2})"), ""),
)
MAY_BE_ESCAPED = re.compile(r"[%&\\]|0[xX]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
MAX_ROUNDS = 6  # escapes of escapes, as deep as anyone nests them


def fold(text: str) -> str:
    return text if text.isascii() else _NON_ASCII.sub(lambda m: fold_char(m.group()), text)


def decode(text: str) -> str:
    """Every escape undone, round after round, then folded; `+` read as the space it encodes."""
    for _ in range(MAX_ROUNDS):
        if not MAY_BE_ESCAPED.search(text):
            break
        before = text
        for triggers, pattern, replace in _ESCAPES:
            if any(t in text for t in triggers):
                text = pattern.sub(replace, text)
        text = fold(text)
        if text == before:
            break
    return fold(text).replace("+", " ")
