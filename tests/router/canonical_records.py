"""Generated audit records for the canonical JSON tests: `plain_record` holds only what the fast
encoder takes (nested dicts and lists, strings with every kind of character, ints up to 64 bits,
floats from 1e-4 to 1e16, bools, None); `odd_record` mixes in each value on which orjson and the
standard library differ or one of them refuses (floats of every magnitude, NaN, the infinities,
ints past 64 bits, lone surrogates, non-str keys, subclasses, enums, tuples)."""

from __future__ import annotations

import math
import random
import struct
import sys
import uuid
from enum import Enum, IntEnum, StrEnum
from pathlib import Path
from typing import Any

# Quotes, backslashes, every control character, DEL, U+2028/2029, Latin, CJK, the top of the BMP
# (sorted differently from astral characters in UTF-16), emoji, a private-use astral character.
_CHARACTERS = (
    ['"', "\\", "/", " ", "a", "Z", "0", "é", "ß", "漢", "字", "\u2028", "\u2029", "\x7f", "\u00a0",
     "\ufeff", "\ufffd", "\uffff", "\ue000", "🦀", "😀", "\U0001f1eb\U0001f1f7", "\U0010fffd"]
    + [chr(code) for code in range(0x20)]
)
_INT_EDGES = [0, 1, -1, 2**31, -(2**31), 2**53 + 1, 2**63 - 1, -(2**63), 2**63, 2**64 - 1]
_FLOAT_EDGES = [0.0, 1e-4, -1e-4, math.nextafter(1e16, 0), 1e15, 0.1, 1 / 3, 1764127862.123456,
                123456789012345.67, 2.5, -7.0]


class Kind(StrEnum):
    POST = "post"


class Level(IntEnum):
    HIGH = 3


class Colour(Enum):
    RED = "red"


class Text(str):
    pass


class Number(int):
    pass


class Real(float):
    pass


class Mapping(dict):  # type: ignore[type-arg]
    pass


def text(rng: random.Random, longest: int = 12) -> str:
    return "".join(rng.choice(_CHARACTERS) for _ in range(rng.randint(0, longest)))


def any_float(rng: random.Random) -> float:
    """Floats of every magnitude: random bit patterns (finite), and powers of ten with their
    neighbours."""
    if rng.random() < 0.5:
        while True:
            value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(value):
                return value
    value = rng.choice([1.0, -1.0, 1.5, 9.999999999999999]) * 10.0 ** rng.randint(-30, 30)
    return rng.choice([value, math.nextafter(value, 0), math.nextafter(value, math.inf)])


def plain_float(rng: random.Random) -> float:
    if rng.random() < 0.2:
        return rng.choice(_FLOAT_EDGES)
    while True:
        value = any_float(rng)
        if 1e-4 <= abs(value) < 1e16:
            return value


def plain_int(rng: random.Random) -> int:
    if rng.random() < 0.3:
        return rng.choice(_INT_EDGES)
    return rng.randint(-(2**63), 2**64 - 1) >> rng.randint(0, 63)


def _scalar(rng: random.Random, odd: bool) -> Any:
    roll = rng.random()
    if odd and roll < 0.25:
        return rng.choice([
            math.nan, math.inf, -math.inf, -0.0, any_float(rng), any_float(rng), 1e-5, 1e-7, 1e16, 1e300,
            5e-324, 2**64, -(2**63) - 1, 10**30, -(10**40), "lone \udc80 surrogate", "\ud83e",
            Kind.POST, Level.HIGH, Text("a str subclass"), Number(7), Real(2.5), True, None,
        ])
    if roll < 0.45:
        return text(rng)
    if roll < 0.6:
        return plain_int(rng)
    if roll < 0.75:
        return plain_float(rng)
    return rng.choice([True, False, None])


def _key(rng: random.Random, odd: bool) -> Any:
    if odd and rng.random() < 0.1:
        return rng.choice([Kind.POST, Text("key")])
    return text(rng, 8)


def value(rng: random.Random, depth: int, odd: bool) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.6:
        return _scalar(rng, odd)
    if roll < 0.8:
        items = [value(rng, depth - 1, odd) for _ in range(rng.randint(0, 4))]
        if odd and rng.random() < 0.1:
            return tuple(items)
        return items
    if odd and roll < 0.83:  # a non-str key alone: the standard library cannot sort it among strings
        return {rng.choice([-12345678, 2.5e-7, 1e16, True, None]): value(rng, depth - 1, odd)}
    mapping = {_key(rng, odd): value(rng, depth - 1, odd) for _ in range(rng.randint(0, 4))}
    if odd and rng.random() < 0.1:
        return Mapping(mapping)
    return mapping


def record(rng: random.Random, odd: bool) -> dict[str, Any]:
    """An audit record: what the writer adds (seq, prev, ts) and generated fields around them."""
    fields = {text(rng, 6) or "k": value(rng, 4, odd) for _ in range(rng.randint(0, 8))}
    fields.pop("hash", None)
    return {**fields, "seq": rng.randint(1, 10**9), "prev": f"{rng.getrandbits(256):064x}",
            "ts": 1764127862 + rng.random()}


def plain_record(rng: random.Random) -> dict[str, Any]:
    return record(rng, odd=False)


def odd_record(rng: random.Random) -> dict[str, Any]:
    return record(rng, odd=True)


REFUSED_BY_THE_STANDARD_LIBRARY = [Colour.RED, uuid.UUID(int=1), b"bytes", {1, 2}]


def write_log(folder: Path, key: bytes, seed: int, lines: int) -> None:
    """`lines` generated records, plain and odd in turns, appended to the chain `r1` in `folder`."""
    from router.audit.log import AuditLog

    rng = random.Random(seed)
    log = AuditLog(folder, "r1", key=key, sync_seconds=None)
    try:
        for number in range(lines):
            log.append(odd_record(rng) if number % 2 else plain_record(rng))
    finally:
        log.close()


if __name__ == "__main__":  # write_log without orjson: FOLDER KEY_HEX SEED LINES
    sys.modules["orjson"] = None  # type: ignore[assignment]  # `import orjson` now fails
    from router.audit import canonical_json

    assert not canonical_json.available()
    write_log(Path(sys.argv[1]), bytes.fromhex(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
