"""Why a text about to be published may hide something, said for the owner: the signal that holds
a write for approval when no redactor table knows the spelling (issue 18, item 11).

A list of decodings is never complete, so this looks for what any hidden payload needs, not for
its name. Each check reads the text as a person would not write it:

- characters nobody sees (`protocol.invisible`: zero-width, tag and selector characters), which
  can carry a whole message under an innocent one;
- a run that decodes to readable text or a compressed stream (`protocol.blobs`);
- a long run that looks random (a key nobody knows the shape of), also when it is a part of an
  address: a link's host labels, path segments and query values are read one by one, because a
  key in a link's path reaches the world as surely as one in the text;
- a word that mixes alphabets (`pаypal`, a key spelt with Lisu or Cherokee look-alikes): ordinary
  words keep to one script, look-alike spellings cannot;
- a stretch with no word in it at all (bits, Morse, Braille cells, digit codes, symbol soup such
  as uuencode): ordinary posts put words between their numbers.

A signal, never a proof: what it names waits for the owner, who sees the reason.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from protocol.blobs import blobs
from protocol.invisible import hidden_in

# What a random run looks like: letters, digits and the symbols encodings use, no spaces.
_RUN = re.compile(r"[A-Za-z0-9+/=_\-~!#$%&*.:;<>?@^|]{24,}")
MIN_RUN = 24
ENTROPY_BITS = 4.0  # bits per character a run must reach to count as random-looking
# A hex run draws on 16 symbols, so a random one often stays under ENTROPY_BITS (of 24 random hex
# characters the lowest entropy seen in 20,000 draws was 2.64 bits). A hash shown to people is in
# one case; hex in both cases is not written for people.
HEX_ENTROPY_BITS = 2.5
# Readable text a run must decode to: a 12-character tag decodes to 9 bytes at most, and 9 random
# bytes are printable often enough to hold ordinary posts; no key worth hiding is that short.
MIN_DECODED = 12
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{24,}")
_ADDRESS = re.compile(r"(?i)\b(?:https?|ftp|wss?)://[^\s<>\"']+|\bwww\.[^\s<>\"']+")
# The parts of an address a person reads as one piece each.
_ADDRESS_PARTS = re.compile(r"[/?&=#.:@;,+_-]+")
# A word: letters (and marks) in a row, apostrophes and joiners inside it; a hyphen or a digit ends
# it ("IT-отдел", "5G-сеть" are two words in two scripts each).
_WORD = re.compile(r"[^\W\d_]+(?:[\u200c\u200d'’][^\W\d_]+)*")
# Scripts people mix inside one word in ordinary writing (Japanese puts Latin beside kana and kanji).
_MIXING_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC", "KATAKANA-HIRAGANA"})
WORDLESS_CHARS = 24  # characters in a row of tokens that hold no letter at all
# ... or this many when they are symbols outside ASCII (Braille cells carry a byte each)
WORDLESS_SYMBOLS = 12
SOUP_SYMBOLS = 0.25  # a token this much made of symbols (uuencode, ascii85 without its marks)
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2190-\u21ff\u2300-\u23ff\ufe0f\u200d\u20e3"
    "\U000e0020-\U000e007f\u00a9\u00ae\u2122]"
)


def entropy(text: str) -> float:
    """Shannon entropy of the characters of `text`, in bits per character."""
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


def random_looking(run: str) -> bool:
    """A run whose pieces that are no word (between its symbols) are long and random: a setting
    such as `ROUTER_RATE_LIMITS=*:post=0/60` is words and numbers, a key is not."""
    if any(_mixed_case_hex(part.group()) for part in _ALNUM_RUN.finditer(run)):
        return True
    core = "".join(piece for piece in _PIECE.findall(run) if not _word_like(piece))
    if len(core) < MIN_CORE:
        return False
    classes = sum((any(map(str.islower, core)), any(map(str.isupper, core)), any(map(str.isdigit, core))))
    return classes >= 2 and entropy(core) >= ENTROPY_BITS


_PIECE = re.compile(r"[A-Za-z0-9]+")
MIN_CORE = 16  # characters of a run's word-less pieces: fewer carry no key


def _word_like(piece: str) -> bool:
    """Letters in one case (or a capital first), or a number: how people write words and counts."""
    return piece.isdigit() or (piece.isalpha() and (piece.islower() or piece.isupper() or piece.istitle()))


def _mixed_case_hex(run: str) -> bool:
    return (
        all(c in string.hexdigits for c in run)
        and any(map(str.isdigit, run))
        and any(map(str.islower, run))
        and any(map(str.isupper, run))
        and entropy(run.lower()) >= HEX_ENTROPY_BITS
    )


def suspicion(text: str) -> str | None:
    """Why a text about to be published may carry something hidden, or None (module doc)."""
    invisible = hidden_in(text)
    if invisible:
        first = f"U+{ord(text[invisible[0]]):04X}"
        return (
            f"it holds {len(invisible)} invisible {'character' if len(invisible) == 1 else 'characters'} "
            f"(first {first}: zero-width, tag or selector characters no reader sees, which can carry "
            "a hidden message)"
        )
    for blob in blobs(text, depth=1):
        readable = [t for t in blob.texts if _readable(t) and len(t) >= MIN_DECODED]
        if readable or len(blob.kinds) > 1:
            return f"it holds a {' in '.join(reversed(blob.kinds))} run that decodes to text"
    for check in (_random_run, _random_address_part, _mixed_script_word, _wordless_stretch, _symbol_soup):
        why = check(text)
        if why is not None:
            return why
    return None


def fields_suspicion(fields: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The first published field (name, text) that is suspect: (its name, why), or None; a target
    (`TARGET_FIELDS`, a post's id or address) is read for the names in it only."""
    for name, text in fields:
        why = target_suspicion(text) if name in TARGET_FIELDS else suspicion(text)
        if why is not None:
            return name, why
    return None


TARGET_FIELDS = frozenset({"reply_to", "quote", "post_id"})
_DID = re.compile(r"did:[a-z]+:[A-Za-z0-9._:%-]+")


def target_suspicion(target: str) -> str | None:
    """Why a post's address may carry something: a random-looking label in the name of its host or
    its author's handle, which the router looks up (the lookup alone tells that name's DNS server
    what it holds). A DID and a post's own id are random by nature and are not read."""
    names = _DID.sub(" ", target.replace("at://", "https://", 1))
    for match in _ADDRESS.finditer(names):
        parts = urlsplit(match.group())
        hosts = [parts.hostname or ""] + [p for p in parts.path.split("/") if "." in p]
        for label in (label for host in hosts for label in host.split(".")):
            if len(label) >= MIN_RUN and random_looking(label):
                return f"its target names a host or handle with a {len(label)}-character random-looking part"
    return None


def _readable(text: str) -> bool:
    printable = sum(c.isprintable() and c.isascii() for c in text)
    letters = sum(c.isalpha() for c in text)
    return len(text) >= 8 and printable >= 0.9 * len(text) and letters >= 0.5 * len(text)


def _random_run(text: str) -> str | None:
    for match in _RUN.finditer(_ADDRESS.sub(" ", text)):
        if random_looking(match.group()):
            size = len(match.group())
            return f"it holds a {size}-character run that looks random (a key or an encoded blob?)"
    return None


def address_parts(address: str) -> Iterator[str]:
    """A link's host labels, path segments, query names and values and fragment, each undone
    from its percent escapes: the pieces a key could be cut into."""
    try:
        parts = urlsplit(address if "://" in address else f"http://{address}")
        pieces = [parts.netloc, parts.path, parts.query, parts.fragment]
    except ValueError:
        pieces = [address]
    for piece in pieces:
        yield from (p for p in _ADDRESS_PARTS.split(unquote(piece)) if p)


def _random_address_part(text: str) -> str | None:
    for match in _ADDRESS.finditer(text):
        parts = list(address_parts(match.group()))
        # A key cut into short segments is still one random run once its pieces are put together.
        idlike = "".join(p for p in parts if _id_like(p))
        for run in [*parts, idlike]:
            if len(run) >= MIN_RUN and random_looking(run):
                size = len(run)
                return f"its link holds a {size}-character part that looks random (a key or an encoded blob?)"
    return None


def _id_like(part: str) -> bool:
    """A link part that is no word: letters with digits, or upper case inside lower case."""
    has_digit = any(c.isdigit() for c in part)
    has_letter = any(c.isalpha() for c in part)
    inner_upper = any(c.isupper() for c in part[1:]) and any(c.islower() for c in part)
    return len(part) >= 6 and has_letter and (has_digit or inner_upper)


@lru_cache(maxsize=4096)
def script_of(char: str) -> str:
    """The script a letter is written in, by its Unicode name; styled Latin (full-width,
    mathematical, circled, small capitals, superscripts) is Latin."""
    base = unicodedata.normalize("NFKD", char)[:1]
    if base.isascii() and base.isalpha():
        return "LATIN"
    name = unicodedata.name(char, "")
    if " SIGN" in name:
        return ""  # a unit written as a letter (the micro, ohm and angstrom signs): no script
    return name.split(" ", 1)[0] if name else "?"


def _mixed_script_word(text: str) -> str | None:
    if text.isascii():
        return None
    for match in _WORD.finditer(text):
        word = match.group()
        scripts = {script_of(c) for c in word if c.isalpha()} - _MIXING_SCRIPTS - {""}
        if len(scripts) > 1:
            return (
                f"the word {word[:40]!r} mixes {' and '.join(sorted(scripts)).lower()} letters "
                "(a look-alike spelling?)"
            )
    return None


def _wordless_stretch(text: str) -> str | None:
    """Tokens in a row with no letter of any script (emoji aside), over WORDLESS_CHARS in all."""
    stretch = exotic = 0
    distinct: set[str] = set()
    for token in text.split():
        bare = _EMOJI.sub("", token)
        if not bare:
            continue
        if any(c.isalpha() for c in bare):
            stretch = exotic = 0
            distinct = set()
            continue
        stretch += len(bare)
        exotic += sum(not c.isascii() for c in bare)
        distinct |= set(bare)
        if len(distinct) > 1 and (stretch >= WORDLESS_CHARS or exotic >= WORDLESS_SYMBOLS):
            return f"it holds {stretch} characters in a row with no word in them (bits, Morse, codes?)"
    return None


def _symbol_soup(text: str) -> str | None:
    for token in _ADDRESS.sub(" ", text).split():
        if len(token) < MIN_RUN:
            continue
        symbols = sum(not c.isalnum() for c in token)
        if symbols >= SOUP_SYMBOLS * len(token) and any(c.isalnum() for c in token) and len(set(token)) > 12:
            return f"it holds a {len(token)}-character run mostly of symbols (an encoded blob?)"
    return None
