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
import re
import unicodedata
from collections.abc import Callable

Span = tuple[int, int]
Origin = list[Span]  # for each character of a view: the span of the original text it came from

# Look-alikes NFKD leaves alone (Cyrillic, Greek, Armenian, Latin extensions) -> the ASCII they mimic.
CONFUSABLES = dict(
    zip(
        "аеіјорѕсухкԁһӏԛԝɡвтмнАВЕЅІЈКМНОРСТУХҮԚԜЗαοινρτυκχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧօսհոցզıȷɑ",
        "aeijopscyxkdhlqwgBTMHABESIJKMHOPCTYXYQW3aoivptukxeABEZHIKMNOPTYXouhngqija",
        strict=True,
    )
)
_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf"})  # combining marks, zero-width and format characters


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One non-ASCII character as the ASCII it stands for, '' when invisible, else itself."""
    if char in CONFUSABLES:
        return CONFUSABLES[char]
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    parts = [CONFUSABLES.get(c, c) for c in unicodedata.normalize("NFKD", char)]
    return "".join(c for c in parts if unicodedata.category(c) not in _DROPPED_CATEGORIES)


def rewrite(
    text: str, origin: Origin | None, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]
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
        new = replace(match)
        if new:
            parts.append(new)
            spans.extend([(origin[start][0], origin[end - 1][1])] * len(new))
        last = end
    if not parts:
        return text, origin
    parts.append(text[last:])
    spans.extend(origin[last:])
    return "".join(parts), spans


def _bytes_text(digits: str) -> str:
    return bytes.fromhex(digits).decode("utf-8", "replace")


def _code_units(match: re.Match[str]) -> str:
    units = "".join(chr(int(h, 16)) for h in re.findall(r"[0-9A-Fa-f]{4,8}", match.group()))
    return units.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_ESCAPES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"(?:%[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m.group().replace("%", ""))),
    (
        re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?"),
        lambda m: html.unescape(m.group()),
    ),
    (re.compile(r"(?:\\u[0-9A-Fa-f]{4})+|\\U[0-9A-Fa-f]{8}"), _code_units),
    (re.compile(r"(?:\\x[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m.group().replace("\\x", ""))),
    (re.compile(r"(?:=[0-9A-Fa-f]{2})+"), lambda m: _bytes_text(m.group().replace("=", ""))),
    (re.compile(r"=\r?\n"), lambda m: ""),  # a quoted-printable soft line break
    (re.compile(r"\\[nrt]"), lambda m: " "),
    (re.compile(r"\\([/\"'\\])"), lambda m: m.group(1)),
    (re.compile(r"0[xX](?=[0-9A-Fa-f]{2})"), lambda m: ""),
)
_MAY_BE_ESCAPED = re.compile(r"[%&\\=]|0[xX]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_PLUS = re.compile(r"\+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
MAX_ROUNDS = 6  # escapes of escapes, as deep as anyone nests them


def fold(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    if text.isascii():
        return text, origin
    return rewrite(text, origin, _NON_ASCII, lambda m: fold_char(m.group()))


def decode(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    """Every escape undone, round after round, then folded; `+` read as the space it encodes."""
    for _ in range(MAX_ROUNDS):
        if not _MAY_BE_ESCAPED.search(text):
            break
        before = text
        for pattern, replace in _ESCAPES:
            text, origin = rewrite(text, origin, pattern, replace)
        text, origin = fold(text, origin)
        if text == before:
            break
    return rewrite(text, origin, _PLUS, lambda m: " ") if "+" in text else (text, origin)


_DELETE = bytes(b for b in range(128) if not chr(b).isalnum())


def skeleton(text: str, origin: Origin | None = None) -> tuple[str, Origin | None]:
    """ASCII letters and digits only, lower-cased."""
    if origin is None:
        return text.encode("ascii", "ignore").translate(None, _DELETE).lower().decode("ascii"), None
    text, origin = rewrite(text, origin, re.compile(r"[^A-Za-z0-9]+|[^\x00-\x7f]"), lambda m: "")
    return text.lower(), origin


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
        for encoded in {raw.hex(), *base64_cores(raw), *base32_cores(raw)}:
            core = skeleton(encoded)[0]
            if len(core) >= MIN_ENCODED_NEEDLE:
                needles |= {core, core[::-1]}
    return needles
