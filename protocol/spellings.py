"""The spellings a secret can be echoed in, reduced to a few views of a text that can be searched.

A text is read three ways, each view keeping for every character the span of the original text it
came from (so a find in any view redacts the right characters of the original):

- as it is;
- *decoded*: escapes undone until none is left (URL `%2f`/`%252F`, HTML `&#47`/`&#x2F;`/`&amp;`,
  JSON/Python `\\u002f`/`\\x2f`/`\\/`, quoted-printable `=2F`, `0x` before hex bytes), then
  *folded*: full-width and mathematical letters, Cyrillic/Greek look-alikes and other digits
  become ASCII, zero-width characters, soft hyphens and combining marks are dropped;
- the *skeleton* of a view: its ASCII letters and digits only, lower-cased. Spaces, punctuation,
  line breaks and case no longer separate anything, so `a b c`, `A.B.C`, MIME base64 lines and
  `de:ad:be:ef` read as `abc`, `abc`, one run and `deadbeef`.

`skeleton_needles()` says what a secret looks like in a skeleton: itself, reversed, in rot13, and
its bytes in hex, base64 (at each byte offset it can start at, standard or URL-safe, any padding)
and base32, each also reversed.
"""

from __future__ import annotations

import base64
import codecs
import functools
import html
import quopri
import re
import unicodedata
from collections.abc import Callable

Span = tuple[int, int]
Origin = list[Span]  # for each character of a view: the span of the original text it came from

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


def rewrite(
    text: str, origin: Origin | None, pattern: re.Pattern[str], replace: Replacement
) -> tuple[str, Origin | None]:
    """`pattern.sub(replace, text)`, and when `origin` is given, the origin of the new text:
    each replacement character comes from the whole match it replaced."""
    if origin is None:
        return pattern.sub(replace, text), None
    parts: list[str] = []
    spans: Origin = []
    last = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        parts.append(text[last:start])
        spans.extend(origin[last:start])
        new = replace if isinstance(replace, str) else replace(match)
        if new:
            parts.append(new)
            spans.extend([(origin[start][0], origin[end - 1][1])] * len(new))
        last = end
    if not parts:
        return text, origin
    parts.append(text[last:])
    spans.extend(origin[last:])
    return "".join(parts), spans


def _bytes_text(match: re.Match[str], marker: str) -> str:
    """A run of escaped bytes as its text; left alone when it is not UTF-8 (`=AA` in a key is
    more likely the key than a quoted-printable byte)."""
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
# Quoted-printable `=3D` is read in a view of its own: in a URL or a key, `=` is far more often
# itself, and reading `k=3fa` as `k?a` would hide the key from the other views.
_QUOTED: tuple[_Escape, ...] = (
    (("=",), re.compile(r"(?:=[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m, "=")),
    (("=",), re.compile(r"=\r?\n"), ""),  # a soft line break
)
QUOTED_PRINTABLE = re.compile(r"=[0-9A-Fa-f]{2}|=\r?\n")
MAY_BE_ESCAPED = re.compile(r"[%&\\]|0[xX]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_PLUS = re.compile(r"\+")
_SPACES = re.compile(r"\s+")
_NOT_SKELETON = re.compile(r"[^A-Za-z0-9]+")
MAX_ROUNDS = 6  # escapes of escapes, as deep as anyone nests them


def fold(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    if text.isascii():
        return text, origin
    return rewrite(text, origin, _NON_ASCII, lambda m: fold_char(m.group()))


def compact(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    """Without white space (the escapes of a spaced-out key, `% 2 F`, join up again)."""
    return rewrite(text, origin, _SPACES, "")


def decode(
    text: str, origin: Origin | None = None, quoted: int = 0, squeeze: bool = False
) -> tuple[str, Origin | None]:
    """Every escape undone, round after round, then folded; `+` read as the space it encodes.
    `quoted`: quoted-printable too, in that many first rounds (1: as the outermost layer only,
    so a key holding `=5c` stays itself); `squeeze`: white space taken out at every round
    (escapes spaced out, `% 2 F`, or spaces that were themselves escaped, join up)."""
    for round_number in range(MAX_ROUNDS):
        if squeeze:
            text, origin = compact(text, origin)
        escapes = _QUOTED + _ESCAPES if round_number < quoted else _ESCAPES
        if not MAY_BE_ESCAPED.search(text) and escapes is _ESCAPES:
            break
        before = text
        for triggers, pattern, replace in escapes:
            if any(t in text for t in triggers):
                text, origin = rewrite(text, origin, pattern, replace)
        text, origin = fold(text, origin)
        if text == before:
            break
    return rewrite(text, origin, _PLUS, " ") if "+" in text else (text, origin)


# Lower case, and the look-alikes no font tells apart read as one: 0 and o, 1, i and l.
_ALIKE = {"0": "o", "1": "l", "i": "l"}
_CANON = bytes(ord(_ALIKE.get(chr(b).lower(), chr(b).lower())) for b in range(256))
_DELETE = bytes(b for b in range(128) if not chr(b).isalnum())


def skeleton(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    """ASCII letters and digits only, lower-cased, look-alikes made one."""
    if origin is None:
        return text.encode("ascii", "ignore").translate(_CANON, _DELETE).decode("ascii"), None
    text, origin = rewrite(text, origin, _NOT_SKELETON, "")
    return text.encode("ascii").translate(_CANON).decode("ascii"), origin


def plain_form(secret: str) -> str:
    """The secret as the decoded view spells it."""
    return fold(secret)[0].replace("+", " ")


def _cores(encoded_at: Callable[[int], str], group: tuple[int, int], raw: bytes) -> set[str]:
    """The part of an encoding fixed by `raw` alone, at each byte offset it can start at."""
    bits, per_char = group
    cores = set()
    for offset in range(bits // 8):
        encoded = encoded_at(offset)
        first = -(-8 * offset // per_char)
        last = 8 * (offset + len(raw)) // per_char
        cores.add(encoded[first:last])
    return cores


def base64_cores(raw: bytes) -> set[str]:
    return _cores(lambda k: base64.b64encode(b"\0" * k + raw).decode(), (24, 6), raw)


def base32_cores(raw: bytes) -> set[str]:
    return _cores(lambda k: base64.b32encode(b"\0" * k + raw).decode(), (40, 5), raw)


MIN_PLAIN_NEEDLE = 8  # a shorter secret is matched in the other views only
MIN_ENCODED_NEEDLE = 12


def skeleton_needles(secret: str) -> set[str]:
    rot = codecs.encode(secret, "rot13")
    needles = set()
    for form in {secret, secret[::-1], rot, rot[::-1]}:
        plain = skeleton(fold(form)[0])[0]
        if len(plain) >= MIN_PLAIN_NEEDLE:
            needles.add(plain)
        raw = form.encode("utf-8")
        quoted = quopri.encodestring(raw).decode("ascii")
        for encoded in {raw.hex(), quoted, *base64_cores(raw), *base32_cores(raw)}:
            core = skeleton(encoded)[0]
            if len(core) >= MIN_ENCODED_NEEDLE:
                needles |= {core, core[::-1]}
    return needles
