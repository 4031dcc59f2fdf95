"""The runs of the encodings a blob may be written in, and their decoders: base64, hex, Ascii85,
base85, octal, decimal and `U+` character codes, then the symbol codes of `protocol.symbol_codes`.
Each is (kind, the pattern of a run, a decoder giving the run's bytes or None); `protocol.blobs`
finds the runs and undoes the layers.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from protocol.symbol_codes import SYMBOL_DECODERS

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_HEX = re.compile(r"(?:0[xX])?[0-9A-Fa-f]{2}(?:[ :,-]?(?:0[xX])?[0-9A-Fa-f]{2}){5,}")
_ASCII85 = re.compile(r"<~[!-u\s]{5,}?~>|[!-u]{15,}")
_BASE85 = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{15,}")
_A85_SYMBOLS = frozenset("!\"#$%&'()*,.:;<>?@[\\]^`")
_B85_SYMBOLS = frozenset("!#$%&()*;<>?@^`{|}~")
CODES_GATE = re.compile(r"\d\d[ ,;]+\d\d|\\[0-7]{3}\\")
_OCTAL = re.compile(r"(?:\\[0-7]{3}){4,}|\b[0-7]{3}(?:[ ,;]+[0-7]{3}){4,}\b")
_DECIMAL = re.compile(r"\b\d{2,7}(?:[ ,;]+\d{2,7}){4,}\b")
_CODE_POINTS = re.compile(r"(?:[Uu]\+[0-9A-Fa-f]{4,6}[\s,;]*){4,}")


def _b64(run: str) -> bytes | None:
    run = run.rstrip("=")
    alphabet = "-_" if ("-" in run or "_" in run) else "+/"
    try:
        return base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet.encode(), validate=True)
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> bytes | None:
    digits = re.sub(r"0[xX]|[ :,-]", "", run)
    try:
        return bytes.fromhex(digits) if len(digits) % 2 == 0 else None
    except ValueError:
        return None


def _a85(run: str) -> bytes | None:
    """Ascii85 (Adobe's, with or without `<~ ~>`); like base85, only a run with its symbols."""
    if not run.startswith("<~") and _A85_SYMBOLS.isdisjoint(run):
        return None
    try:
        return base64.a85decode(run, adobe=run.startswith("<~"), ignorechars=b" \t\r\n")
    except ValueError:
        return None


def _b85(run: str) -> bytes | None:
    """Base85 (RFC 1924, as git and Python write it); a run with none of its symbols is
    almost never one (and more likely base64), so only a run that has some is tried."""
    if _B85_SYMBOLS.isdisjoint(run):
        return None
    try:
        return base64.b85decode(run)
    except ValueError:
        return None


def _codes(run: str, base: int) -> bytes | None:
    """Character codes written out: `\\101\\102`, `101 102`, `72,101,108`, `U+0048 U+0065`;
    as UTF-8 bytes."""
    numbers = [int(n, base) for n in re.findall(r"[0-9A-Fa-f]+" if base == 16 else r"\d+", run)]
    if not numbers or any(n > 0x10FFFF or 0xD800 <= n <= 0xDFFF for n in numbers):
        return None
    return "".join(map(chr, numbers)).encode("utf-8", "ignore")


DECODERS: tuple[tuple[str, re.Pattern[str], Callable[[str], bytes | None]], ...] = (
    ("base64", _BASE64, _b64),
    ("hex", _HEX, _hex),
    ("ascii85", _ASCII85, _a85),
    ("base85", _BASE85, _b85),
    ("octal codes", _OCTAL, lambda run: _codes(run, 8)),
    ("decimal codes", _DECIMAL, lambda run: _codes(run, 10)),
    ("code points", _CODE_POINTS, lambda run: _codes(run.upper().replace("U+", " "), 16)),
    *SYMBOL_DECODERS,
)
