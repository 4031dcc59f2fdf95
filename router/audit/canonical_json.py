"""The audit log's canonical JSON (sorted keys, no spaces, UTF-8 as is: what the standard library
writes with `sort_keys=True, separators=(",", ":"), ensure_ascii=False`), and a faster encoder
that writes the very same bytes where it provably can.

`standard` is the definition: the standard library's C encoder, built once. `fast` uses orjson
(when installed) for a value holding only plain `dict`, `list`, `str`, `int`, `bool`, `None` and
floats that both print alike, and answers None for anything else, the caller then encoding it the
standard way. Where the two differ, and how each difference is kept off the fast path:
- floats: orjson writes 1e-5 as `0.00001` and 1e-8 as `1e-8` (Python: `1e-05`, `1e-08`), and
  NaN and the infinities as `null`: only finite floats with 1e-4 <= |x| < 1e16, or zero, are fast;
- integers beyond 64 bits, lone surrogates, non-str keys, nesting past 255: orjson raises;
- subclasses of str, int, float, dict, list (enums included), tuples, and the types orjson writes
  that the standard library refuses (UUID, dataclasses, datetimes, enums, `orjson.Fragment`): the
  shape check admits exact types only, and `OPT_PASSTHROUGH_*` makes orjson refuse those as keys;
- a record holding itself: the shape check runs out of stack, and the standard library then
  raises as it did before.
tests/router/audit/test_canonical_json.py compares the two on many generated records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from json.encoder import c_make_encoder  # type: ignore[attr-defined]  # the C encoder, when built
from typing import Any

try:
    import orjson
except ImportError:  # the standard library alone: the same lines, more slowly
    orjson = None  # type: ignore[assignment]


def _standard_encoder() -> Callable[[Any], str]:
    """The canonical encoding without `JSONEncoder.encode`'s per-call set-up: the same C encoder
    and settings, built once (the pure-Python encoder when the C one is not built)."""
    if c_make_encoder is None:
        return json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
    from json.encoder import encode_basestring

    iterencode = c_make_encoder(None, None, encode_basestring, None, ":", ",", True, False, True)
    return lambda value: "".join(iterencode(value, 0))


standard: Callable[[Any], str] = _standard_encoder()


def is_plain(mapping: dict[Any, Any]) -> bool:
    """Whether orjson writes what `mapping` holds as the standard library does, its keys and the
    errors orjson raises itself aside (see the module's docstring)."""
    return _plain(mapping.values())


def _plain(values: Iterable[Any]) -> bool:
    """Scalars are checked inline, one call per dict or list: a call per value would cost more
    than the encoding it spares."""
    for item in values:
        kind = type(item)
        if kind is str or kind is int or item is None or kind is bool:
            continue
        if kind is dict:
            if not _plain(item.values()):
                return False
        elif kind is list:
            if not _plain(item):
                return False
        elif kind is not float or not (1e-4 <= abs(item) < 1e16 or item == 0.0):  # NaN fails both
            return False
    return True


if orjson is None:

    def fast(record: dict[str, Any], unknown: dict[str, Any] | None = None) -> bytes | None:
        """Without orjson: always the standard way."""
        return None

else:
    ORJSON_OPTIONS = (
        orjson.OPT_SORT_KEYS
        | orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )
    _dumps = orjson.dumps

    def fast(record: dict[str, Any], unknown: dict[str, Any] | None = None) -> bytes | None:
        """The canonical JSON of the dict `record` as UTF-8 bytes, byte for byte
        `standard(record)`, or None when that cannot be had quickly (a record off the fast path).
        `unknown`: the part of `record` whose shape is checked, when the caller put the rest in
        itself and knows it plain (exact str, int, bool, None; floats 1e-4 <= |x| < 1e16)."""
        try:
            if is_plain(record if unknown is None else unknown):
                return _dumps(record, option=ORJSON_OPTIONS)
        except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
            pass
        return None


def available() -> bool:
    return orjson is not None
