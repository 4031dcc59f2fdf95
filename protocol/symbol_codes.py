"""Bytes written as a number or as symbols: more decoders for `protocol.blobs`, which reads each
run they match as it reads base64 (layer after layer, then named by the hold signal and read by
the injection detector).

- base58 (Bitcoin's alphabet), base36 (either case) and base32 in its extended-hex alphabet: the
  bytes as one big number in that many digits;
- bits: `01101101 01101111 …` or one long run of 0 and 1 (8 to a byte);
- uuencode: one line of `begin`-less uuencoded data (its first character says how many bytes);
- Braille cells: U+2800..U+28FF, the 256 dot patterns, one byte each;
- Morse: dots and dashes, letters apart by spaces, words by `/` (the letters come back upper case;
  the redactor reads case-blind).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

_BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58 = re.compile(r"(?<![0-9A-Za-z])[1-9A-HJ-NP-Za-km-z]{12,200}(?![0-9A-Za-z])")
_BASE36 = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-z]{12,200}|[0-9A-Z]{12,200})(?![0-9A-Za-z])")
_BASE32_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-V]{16,320}|[0-9a-v]{16,320})={0,6}")
_BITS = re.compile(r"(?<![01])(?:[01]{8}[ ,;]?){4,}(?![01])")
_UU_LINE = re.compile(r"(?<!\S)[!-M][!-`][ -`]{4,83}")
_BRAILLE = re.compile(r"[\u2800-\u28ff]{4,}")
_MORSE = re.compile(r"(?<![.\-\w])[.\-]{1,7}(?:(?:[ \t]+|[ \t]*/[ \t]*)[.\-]{1,7}){5,}(?![.\-\w])")

_MORSE_CODES = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- "
    "--.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. .-.-.- --..-- ..--.. -....- ..--.- "
    "-..-. .--.-. -...- .-.-. ---... .-... -.-.-- -.--. -.--.- .----. .-..-. ...-..- -.-.-."
)
_MORSE_SIGNS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,?-_/@=+:&!()'\"$;"
_MORSE_LETTERS = dict(zip(_MORSE_CODES.split(" "), _MORSE_SIGNS, strict=True))


def _big_number(run: str, alphabet: str) -> bytes:
    """The digits of `run` in `alphabet` as one number, as bytes (leading zero digits: zero bytes)."""
    number = 0
    for char in run:
        number = number * len(alphabet) + alphabet.index(char)
    zeros = len(run) - len(run.lstrip(alphabet[0]))
    return b"\0" * zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")


def _base36(run: str) -> bytes:
    return _big_number(run.lower(), "0123456789abcdefghijklmnopqrstuvwxyz")


def _base32_hex(run: str) -> bytes | None:
    run = run.upper().rstrip("=")
    try:
        return base64.b32hexdecode(run + "=" * (-len(run) % 8))
    except (binascii.Error, ValueError):
        return None


def _bits(run: str) -> bytes | None:
    digits = re.sub(r"[ ,;]", "", run)
    if len(digits) % 8:
        return None
    return bytes(int(digits[i : i + 8], 2) for i in range(0, len(digits), 8))


def _uu(run: str) -> bytes | None:
    """One uuencoded line, when its length character agrees with its length (a trailing space,
    the encoding of zero bits, is often lost)."""
    run = run.rstrip()
    size = ord(run[0]) - 32
    body = len(run) - 1
    if not size * 4 // 3 - 1 <= body <= -(-size // 3) * 4 + 1:
        return None
    try:
        return binascii.a2b_uu(run)
    except binascii.Error:
        return None


def _braille(run: str) -> bytes:
    return bytes(ord(c) - 0x2800 for c in run)


def _morse(run: str) -> bytes | None:
    words = []
    for word in run.split("/"):
        codes = word.split()
        if any(code not in _MORSE_LETTERS for code in codes):
            return None
        words.append("".join(_MORSE_LETTERS[code] for code in codes))
    return " ".join(w for w in words if w).encode()


SYMBOL_DECODERS: tuple[tuple[str, re.Pattern[str], Callable[[str], bytes | None]], ...] = (
    ("base58", _BASE58, lambda run: _big_number(run, _BASE58_ALPHABET)),
    ("base36", _BASE36, _base36),
    ("base32hex", _BASE32_HEX, _base32_hex),
    ("bits", _BITS, _bits),
    ("uuencode", _UU_LINE, _uu),
    ("Braille cells", _BRAILLE, _braille),
    ("Morse", _MORSE, _morse),
)
