"""A text as the duplicate guard compares it: normalised, cut into character trigrams, each hashed.

Normalising (before the trigrams): NFKC, invisible characters dropped (format characters such
as zero-width and bidi, every combining mark, the Hangul fillers), links dropped (a link added
to a text does not make it new), case folded, accents dropped, common Cyrillic/Greek look-alikes
mapped to Latin, every run of punctuation, symbols (emoji) and spaces made one space. The
trigrams are then taken with the spaces left out, so letters spaced or dotted apart
("s.p.a.m") are the same letters. Similarity: the Sørensen-Dice coefficient of two texts'
trigram sets. Stored: each trigram's 32-bit CRC, sorted, packed, base64.
"""

from __future__ import annotations

import base64
import re
import unicodedata
import zlib
from array import array

# Letters that look like Latin ones and are used to dodge filters (a subset of Unicode's
# confusables: the lowercase Cyrillic, Greek, Armenian and Latin variants that render like ASCII).
_LOOKALIKE_PAIRS = (
    ("авеёкмнорстухіјѕԁԛԝһүӏѵѡ", "abeekmhopctyxijsdqwhylvw"),  # Cyrillic
    ("αβεικνορτυχγϲϳ", "abeikvoptuxycj"),  # Greek
    ("օսհոցաքզ", "ouhngwpq"),  # Armenian
    ("ıȷɑɡɩɪʏʀɴʙʜɢʟ", "ijagiiyrnbhgl"),  # Latin variants: dotless, script, small capitals
    ("ᴀᴄᴅᴇᴊᴋᴍᴏᴘᴛᴜᴠᴡᴢꜱ", "acdejkmoptuvwzs"),  # phonetic small capitals
)
_LOOKALIKES = str.maketrans("".join(a for a, _ in _LOOKALIKE_PAIRS), "".join(b for _, b in _LOOKALIKE_PAIRS))
_NOT_WORD = re.compile(r"[\W_]+")
_LINK = re.compile(r"(?:https?://|www\.)\S*", re.IGNORECASE)
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me"})  # format characters, combining marks
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters (Lo) that show nothing


def _visible(text: str) -> str:
    return "".join(
        c for c in text if unicodedata.category(c) not in _INVISIBLE_CATEGORIES and c not in _FILLERS
    )


def normalise(text: str) -> str:
    # ASCII is its own NFKC and NFKD and holds no invisible character: those steps are skipped.
    if not text.isascii():
        text = _visible(unicodedata.normalize("NFKC", text))
    text = _LINK.sub(" ", text.casefold())
    if not text.isascii():
        text = _visible(unicodedata.normalize("NFKD", text))
    return _NOT_WORD.sub(" ", text.translate(_LOOKALIKES)).strip()


def trigrams(text: str) -> frozenset[int]:
    """The CRC-32 of each character trigram of the normalised text without its spaces (the whole
    text if shorter)."""
    norm = normalise(text).replace(" ", "") or text.strip().casefold()  # all symbols or a bare link
    if norm.isascii():  # a character is a byte: slice the bytes
        raw = norm.encode("ascii")
        grams = {raw[i : i + 3] for i in range(max(1, len(raw) - 2))}
    else:
        grams = {norm[i : i + 3].encode("utf-8") for i in range(max(1, len(norm) - 2))}
    return frozenset(map(zlib.crc32, grams))


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


def encode(grams: frozenset[int]) -> str:
    return base64.b64encode(array("I", sorted(grams)).tobytes()).decode("ascii")


def decode(text: str) -> frozenset[int]:
    return frozenset(unpack(text))


def unpack(text: str) -> array[int]:
    values = array("I")
    values.frombytes(base64.b64decode(text))
    return values
