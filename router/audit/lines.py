"""The audit chain's line format, and where a chain's lines are.

Every line is the canonical JSON of a record (sorted keys, no spaces, UTF-8 as is) holding `seq`
(1, 2, … across files), `prev` (the `hash` of the line before it; 64 zeros for the very first)
and `hash` (sha256 of the record's canonical JSON without `hash`). A chain `<name>` is its
rotated files `<name>.<last seq>.jsonl`, then its active file `<name>.jsonl`.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path
from typing import Any

from router.audit import canonical_json

GENESIS = "0" * 64
_ROTATED = re.compile(r"^(?P<name>.+)\.(?P<seq>\d{12})\.jsonl$")

# Stands in for the hash while a line is encoded once; per process and secret, so no record's own
# text can hold it (and a line holding it twice is sealed the slow way anyway). 64 bits: a longer
# marker is slower to find in the line.
_MARK = secrets.token_hex(8)
_MARK_FIELD = f'"hash":"{_MARK}"'
_MARK_BYTES = _MARK.encode()
_FIELD_BEFORE_MARK = len(b'"hash":"')
_COMMA = ord(",")
_fast = canonical_json.fast


def canonical(record: dict[str, Any]) -> str:
    return canonical_json.standard(record)


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body).encode("utf-8", "replace")).hexdigest()


def sealed_line(record: dict[str, Any]) -> tuple[str, str]:
    """(hash, line) of a record by the standard library's encoder (what `verify` re-encodes a
    record with): `record_hash` and `canonical` of the record with that hash, from one encoding:
    the record is encoded with a marker as its hash, the hash is taken over that text without the
    marker's field (the canonical JSON of the record without `hash`), then the hash takes the
    marker's place."""
    text = canonical({**record, "hash": _MARK})
    if text.count(_MARK) != 1:  # the marker cannot be told from the record's own content
        return _sealed_slowly(record)
    start = text.index(_MARK_FIELD)
    end = start + len(_MARK_FIELD)
    if text[end] == ",":
        body = text[:start] + text[end + 1 :]
    elif text[start - 1] == ",":  # the last key: its comma is the one before it
        body = text[: start - 1] + text[end:]
    else:
        body = "{}"
    digest = hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()
    return digest, f'{text[:start]}"hash":"{digest}"{text[end:]}'


def seal(record: dict[str, Any], entry: dict[str, Any] | None = None) -> bytes:
    """Sets `record["hash"]` to the record's hash and returns its line as UTF-8 bytes ending in a
    newline: the bytes of `sealed_line`'s line, written by the fast encoder where that provably
    gives the same bytes (`router.audit.canonical_json`), else by the standard one. `entry`: the
    writer's record is `entry` plus `seq` (an int), `prev` (a str) and maybe `ts` (a float from
    `time.time()`): only the entry's shape needs checking."""
    record["hash"] = _MARK
    text = _fast(record, entry)
    parts = None if text is None else text.split(_MARK_BYTES)
    if parts is None or len(parts) != 2:  # no fast encoding, or the marker also in the content
        record["hash"], line = sealed_line(record)
        return (line + "\n").encode("utf-8", "replace")
    # The marker is the value of the record's "hash": the text is `head"hash":"` + marker + `"tail`.
    # Its field and one comma beside it (after it, or before it when "hash" is the last key) go
    # for the hashed text.
    head, tail = parts
    if tail[1] == _COMMA:
        hashed = hashlib.sha256(head[:-_FIELD_BEFORE_MARK])
        hashed.update(tail[2:])
    elif head[-_FIELD_BEFORE_MARK - 1] == _COMMA:
        hashed = hashlib.sha256(head[: -_FIELD_BEFORE_MARK - 1])
        hashed.update(tail[1:])
    else:
        hashed = hashlib.sha256(b"{}")
    digest = hashed.hexdigest()
    record["hash"] = digest
    return b"".join((head, digest.encode(), tail, b"\n"))


def _sealed_slowly(record: dict[str, Any]) -> tuple[str, str]:
    body = {k: v for k, v in record.items() if k != "hash"}
    digest = hashlib.sha256(canonical(body).encode("utf-8", "replace")).hexdigest()
    return digest, canonical({**body, "hash": digest})


def last_line(path: Path, chunk: int = 65536) -> str | None:
    """The last non-empty line of a file, read from its end."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            data = b""
            while end > 0:
                start = max(0, end - chunk)
                handle.seek(start)
                data = handle.read(end - start) + data
                end = start
                stripped = data.rstrip(b"\n")
                if b"\n" in stripped or end == 0:
                    return stripped.rsplit(b"\n", 1)[-1].decode("utf-8", "replace") or None
    except FileNotFoundError:
        return None
    return None


def chain_files(directory: Path, name: str) -> list[Path]:
    """One chain's files in order: the rotated ones by their last seq, then the active one."""
    rotated = sorted(
        p
        for p in directory.glob(f"{name}.*.jsonl")
        if (m := _ROTATED.match(p.name)) is not None and m.group("name") == name
    )
    active = directory / f"{name}.jsonl"
    return [*rotated, *([active] if active.exists() else [])]


def chain_names(directory: Path) -> list[str]:
    names = set()
    for path in directory.glob("*.jsonl"):
        match = _ROTATED.match(path.name)
        names.add(match.group("name") if match else path.name[: -len(".jsonl")])
    return sorted(names)
