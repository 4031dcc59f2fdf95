"""Text hidden inside a blob, for the signals that read outbound and outside text as a person
would not write it: the hold (`protocol.suspicion`: a write carrying a run that decodes to text
waits for the owner, whatever it hides, owner-only data included) and the injection detector
(a prompt hidden in base64 is still read). The redactor does not use it: a credential is echoed
in a transport's spellings (`protocol.transport_spellings`), never inside a chosen code.

A blob has to be decoded whole: gzip or zlib (or bz2, xz) inside base64 or hex, base85 and
Ascii85, octal, decimal or `U+` character codes, UTF-16 or UTF-32 as hex, every character doubled,
and the symbol codes of `protocol.symbol_codes` (bits, uuencode, Braille, Morse). `blobs(text)`
finds the runs that may be one, decodes each (layer after layer, a few layers deep, each layer's
output bounded) and says what text each could hold.
"""

from __future__ import annotations

import bz2
import lzma
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from protocol.blob_codes import CODES_GATE, DECODERS

MAX_DEPTH = 3  # layers undone inside one another (gzip in base64 in hex: 3)
MAX_OUTPUT = 64 * 1024  # bytes a decompressed layer may grow to: a zip bomb stops here
MAX_BLOBS = 64  # runs decoded per text; a text made of nothing but runs is suspect anyway
MIN_BYTES = 6  # a decoded layer shorter than this cannot hold a secret worth the search

Span = tuple[int, int]


@dataclass(frozen=True)
class Blob:
    start: int
    end: int
    texts: tuple[str, ...]  # what the run could decode to, each a candidate
    kinds: tuple[str, ...]  # the layers found, e.g. ("base64", "gzip")


_DOUBLED = re.compile(r"(?:(.)\1){6,}", re.DOTALL)


def _inflate(data: bytes) -> tuple[str, bytes] | None:
    """The layer under a whole compressed stream, bounded: gzip, zlib, bz2, xz. Random bytes can
    start with a stream's magic; they seldom end one, so only a stream that ends counts."""
    makers: list[tuple[str, Callable[[], Any]]] = []
    if data[:2] == b"\x1f\x8b":
        makers.append(("gzip", lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)))
    if data[:1] == b"\x78":
        makers.append(("zlib", zlib.decompressobj))
    if data[:3] == b"BZh":
        makers.append(("bz2", bz2.BZ2Decompressor))
    if data[:6] == b"\xfd7zXZ\x00" or data[:1] == b"\x5d":
        makers.append(("xz", lzma.LZMADecompressor))
    for kind, make in makers:
        stream = make()
        try:
            out = stream.decompress(data, MAX_OUTPUT)
        except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError):
            continue
        if stream.eof and len(out) >= MIN_BYTES:
            return kind, out
    return None


_WIDE = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")


def _texts(data: bytes) -> list[str]:
    """The readable texts a byte string could be (a secret is printable; random bytes are not):
    Latin-1 keeps every ASCII byte where it was; UTF-8 for other scripts; UTF-16 and UTF-32
    (either order) when the bytes are full of zeros."""
    texts = [data.decode("latin-1")]
    if not data.isascii():
        texts.append(data.decode("utf-8", "ignore"))
    if data.count(0) * 4 >= len(data):
        texts += [data.decode(codec, "ignore") for codec in _WIDE]
    return [t for t in texts if _printable(t)]


def _printable(text: str) -> bool:
    if len(text) < MIN_BYTES:
        return False
    return text.isprintable() or len(_UNPRINTABLE.findall(text)) <= 0.15 * len(text)


_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\uffff]")
_PRINTABLE_BYTES = bytes(range(0x20, 0x7F))
_MAGIC = (b"\x1f\x8b", b"\x78", b"BZh", b"\xfd7zXZ\x00", b"\x5d")


def _plausible(data: bytes) -> bool:
    """Bytes that may hold text: a compressed stream's magic, mostly printable ASCII, UTF-8 or
    wide characters (many zeros). Random bytes, the usual find, are none of these: skipped at once."""
    if data.startswith(_MAGIC) or data.count(0) * 4 >= len(data):
        return True
    if len(data.translate(None, _PRINTABLE_BYTES)) <= 0.15 * len(data):
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _layers(data: bytes, kinds: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...]]]:
    inflated = _inflate(data)
    if inflated is not None:
        yield from ((t, (*kinds, inflated[0])) for t in _texts(inflated[1]))
    yield from ((t, kinds) for t in _texts(data))


def blobs(text: str, depth: int = MAX_DEPTH) -> list[Blob]:
    """The runs of `text` that decode to something, and what each could hold (every layer down
    to `depth`, the texts of the inner layers included); in the order of `DECODERS`, each kind's
    runs in the text's order, then the doubled runs."""
    if "<~" in text or len(text) > MEMO_TEXT_CHARS or ("\n" in text and _CODE_POINT.search(text)):
        return _scan(text, depth)
    # Only doubled runs, Ascii85's `<~ ~>` and code points can cross a line, so the runs of a text
    # are its lines' runs: each line is decoded once, then remembered (the redactor reads a post's
    # text alone, then among its audit lines' fields, and the same fields line after line).
    found: list[tuple[int, Blob]] = []
    offset = 0
    for line in text.split("\n"):
        found += [(kind, _shifted(blob, offset)) for kind, blob in _line_runs(line, depth)]
        offset += len(line) + 1
    if len(found) >= MAX_BLOBS:
        return _scan(text, depth)  # where the bound cuts the whole text's scan, as it would
    found.sort(key=lambda pair: pair[0])  # stable: the lines' order within a kind
    decoded = [blob for kind, blob in found if kind != _DOUBLED_KIND]
    if _doubled_across(text):
        return decoded + list(_doubled(text))
    return decoded + [blob for kind, blob in found if kind == _DOUBLED_KIND]


MEMO_TEXT_CHARS, MEMO_LINE_CHARS = 64 * 1024, 4096  # longer ones are scanned each time, whole
MEMO_LINES = 4096  # lines remembered; then forgotten all at once
_DOUBLED_KIND = len(DECODERS)
_CODE_POINT = re.compile(r"[Uu]\+")
_line_memo: dict[tuple[str, int], tuple[tuple[int, Blob], ...]] = {}
_run_memo: dict[tuple[int, str, int], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _line_runs(line: str, depth: int) -> tuple[tuple[int, Blob], ...]:
    """A line's runs, each with its kind's place in `DECODERS` (doubled: after them all)."""
    key = (line, depth)
    found = _line_memo.get(key)
    if found is None:
        runs = tuple((kind, blob) for kind, blob in _kind_runs(line, depth) if blob is not None)
        found = runs + tuple((_DOUBLED_KIND, blob) for blob in _doubled(line))
        if len(line) <= MEMO_LINE_CHARS:
            if len(_line_memo) >= MEMO_LINES:
                _line_memo.clear()
            _line_memo[key] = found
    return found


def _doubled_across(text: str) -> bool:
    """Whether a doubled run may cross lines: only through a doubled newline, one of its 6 or more
    pairs, so with a pair beside it."""
    at = text.find("\n\n")
    while at >= 0:
        before, after = text[max(at - 2, 0):at], text[at + 2:at + 4]
        if (len(before) == 2 and before[0] == before[1]) or (len(after) == 2 and after[0] == after[1]):
            return True
        at = text.find("\n\n", at + 1)
    return False


def _shifted(blob: Blob, offset: int) -> Blob:
    return blob if not offset else Blob(blob.start + offset, blob.end + offset, blob.texts, blob.kinds)


def _scan(text: str, depth: int) -> list[Blob]:
    found: list[Blob] = []  # at most MAX_BLOBS, and then no doubled runs
    for _kind, blob in _kind_runs(text, depth):
        if len(found) >= MAX_BLOBS:
            return found
        if blob is not None:
            found.append(blob)
    found.extend(_doubled(text))
    return found


def _kind_runs(text: str, depth: int) -> Iterator[tuple[int, Blob | None]]:
    """Every decoder's runs, kind by kind: a Blob when it decodes to something, else None."""
    codes = CODES_GATE.search(text) is not None
    for place, (kind, pattern, _decoder) in enumerate(DECODERS):
        if kind.endswith("codes") and not codes:
            continue
        for match in pattern.finditer(text):
            texts, kinds = _decoded(place, match.group(), depth)
            yield place, Blob(match.start(), match.end(), texts, kinds) if texts else None


def _decoded(place: int, run: str, depth: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a run of a kind decodes to; remembered, as a reply's id or link is read again in its
    JSON, and in the audit line beside it."""
    key = (place, run, depth)
    found = _run_memo.get(key)
    if found is None:
        kind, _pattern, decoder = DECODERS[place]
        data = decoder(run)
        texts, kinds = ([], []) if data is None or len(data) < MIN_BYTES or not _plausible(data) else \
            _unwrap(data, (kind,), depth - 1)
        found = (tuple(texts), tuple(kinds))
        if len(run) <= MEMO_LINE_CHARS:
            if len(_run_memo) >= MEMO_LINES:
                _run_memo.clear()
            _run_memo[key] = found
    return found


def _unwrap(data: bytes, kinds: tuple[str, ...], depth: int) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    all_kinds: list[str] = list(kinds)
    for layer, layer_kinds in _layers(data, kinds):
        texts.append(layer)
        all_kinds.extend(k for k in layer_kinds if k not in all_kinds)
        if depth > 0:
            for inner in blobs(layer, depth):
                texts.extend(inner.texts)
                all_kinds.extend(k for k in inner.kinds if k not in all_kinds)
    return texts, all_kinds


def _doubled(text: str) -> Iterator[Blob]:
    """Every character written twice (`sskk__lliivvee`): the run read once."""
    for match in _DOUBLED.finditer(text):
        once = match.group()[::2]
        if len(set(once)) > 2:
            yield Blob(match.start(), match.end(), (once,), ("doubled characters",))


_ROT47 = str.maketrans(
    "".join(chr(c) for c in range(33, 127)), "".join(chr(33 + (c - 33 + 47) % 94) for c in range(33, 127))
)


def rot47(text: str) -> str:
    """Every printable ASCII character but the space turned half way round; its own inverse."""
    return text.translate(_ROT47)
