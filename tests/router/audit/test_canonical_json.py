"""The fast canonical encoder writes the standard library's bytes or nothing: on many generated
records, on each value where orjson and the standard library differ, and through the whole
writer: a log written with orjson and one written without it are the same bytes, and both pass
`python -m router.audit verify` (which re-encodes every record with the standard library)."""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from router.audit import canonical_json
from router.audit.lines import seal, sealed_line
from tests.router import canonical_records
from tests.router.canonical_records import (
    Colour,
    Kind,
    Level,
    Mapping,
    Number,
    Real,
    Text,
    odd_record,
    plain_record,
)

REPO = Path(__file__).resolve().parents[3]
KEY = bytes(range(32))


def standard_bytes(record):
    return canonical_json.standard(record).encode("utf-8")


def test_plain_records_take_the_fast_path_and_get_the_standard_bytes():
    rng = random.Random(20261126)
    for _ in range(20_000):
        record = plain_record(rng)
        assert canonical_json.fast(record) == standard_bytes(record), record


def test_odd_records_get_the_standard_bytes_or_the_standard_path():
    rng = random.Random(18)
    fast = fallback = 0
    for _ in range(20_000):
        record = odd_record(rng)
        line = canonical_json.fast(record)
        if line is None:
            fallback += 1
            continue
        fast += 1
        assert line == standard_bytes(record), record
    assert fast > 2_000 and fallback > 2_000  # both paths were taken


def nested(depth):
    value: dict = {}
    for _ in range(depth):
        value = {"v": value}
    return value


OFF_THE_FAST_PATH = [
    math.nan, math.inf, -math.inf, 1e-5, 9.999999999999999e-05, 1e-8, -1e-300, 5e-324, 1e16, 1e300,
    2**64, -(2**63) - 1, 10**30, "lone \udc80", "\ud83e", Kind.POST, Level.HIGH, Text("x"), Number(7),
    Real(2.5), (1, 2), Mapping(a=1), {1: "an int key"}, {2.5e-7: "a float key"}, {None: 1},
    {Kind.POST: "an enum key"}, {Text("key"): 1}, [[math.nan]], {"deep": nested(300)},
    Colour.RED, orjson.Fragment(b"1"), *canonical_records.REFUSED_BY_THE_STANDARD_LIBRARY,
]


def stable_repr(value) -> str:
    """repr without memory addresses: every pytest-xdist worker must collect the same test ids."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


@pytest.mark.parametrize("value", OFF_THE_FAST_PATH, ids=stable_repr)
def test_each_difference_goes_the_standard_way(value):
    assert canonical_json.fast({"a": 1, "v": value, "z": [value]}) is None


@pytest.mark.parametrize("value", [0.0, -0.0, 1e-4, math.nextafter(1e16, 0), -1.5, 2**64 - 1, -(2**63)])
def test_the_edges_of_the_fast_path_are_the_standard_bytes(value):
    record = {"v": value, "w": [value, {"x": value}]}
    assert canonical_json.fast(record) == standard_bytes(record)


def test_sealed_lines_are_the_standard_lines():
    rng = random.Random(2028)
    for number in range(5_000):
        record = odd_record(rng) if number % 2 else plain_record(rng)
        digest, line = sealed_line(record)
        sealed = dict(record)
        assert seal(sealed) == (line + "\n").encode("utf-8", "replace"), record
        assert sealed["hash"] == digest


def verify(folder):
    return subprocess.run(
        [sys.executable, "-m", "router.audit", "verify", str(folder), "--key-file", str(folder.parent / "key")],
        cwd=REPO, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
    )


def test_logs_written_with_and_without_orjson_are_the_same_bytes_and_verify(tmp_path, monkeypatch):
    (tmp_path / "key").write_text(KEY.hex())
    encoded = []
    dumps = canonical_json._dumps
    monkeypatch.setattr(canonical_json, "_dumps", lambda *a, **k: encoded.append(1) or dumps(*a, **k))
    canonical_records.write_log(tmp_path / "fast", KEY, seed=7, lines=600)
    assert len(encoded) >= 300  # the plain half at least went the fast way
    done = subprocess.run(
        [sys.executable, "-m", "tests.router.canonical_records", str(tmp_path / "standard"), KEY.hex(), "7", "600"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    fast, standard = (tmp_path / "fast" / "r1.jsonl").read_bytes(), (tmp_path / "standard" / "r1.jsonl").read_bytes()
    assert len(fast.splitlines()) == 600
    assert fast == standard
    for folder in ("fast", "standard"):
        checked = verify(tmp_path / folder)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "intact: 600 lines" in checked.stdout


def test_a_record_holding_itself_is_refused_as_the_standard_library_refuses_it():
    record: dict = {"seq": 1, "payload": {"list": []}}
    record["payload"]["list"].append(record)
    assert canonical_json.fast(record) is None
    with pytest.raises(RecursionError):
        seal(record)


def test_a_record_of_many_containers_is_still_the_standard_line():
    record = {"seq": 1, "items": [{"n": n, "tags": [str(n)]} for n in range(20_000)]}
    digest, line = sealed_line(record)
    assert seal(dict(record)) == (line + "\n").encode()
