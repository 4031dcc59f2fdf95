"""One rule for "a router is alive", read by the agent, `status`/`doctor` and the dashboard: a
JSON object whose `ts` is a finite number no older than twice its `ttl` (three readers had three
rules: 30 s, none, 60 s)."""

import json

import pytest

from protocol.heartbeat import is_alive, read_heartbeat

NOW = 1_800_000_000.0


@pytest.mark.parametrize("raw", [None, "", "not json", "[]", '{"ts": "now"}', '{"ts": "soon"}', '{"ts": null}',
                                 '{"ts": true}', '{"ts": 1e999}', '{"router_id": "r"}', "9" * 5000])
def test_anything_that_is_not_a_heartbeat_reads_as_none(raw):
    assert read_heartbeat(raw) is None
    assert is_alive(read_heartbeat(raw), NOW) is False


@pytest.mark.parametrize(("age", "ttl", "alive"), [(0, 15, True), (29, 15, True), (31, 15, False), (100, 60, True),
                                                    (121, 60, False), (29, None, True), (31, None, False),
                                                    (-60, 15, False), (29, "x", True)])
def test_alive_for_twice_the_ttl_the_router_wrote(age, ttl, alive):
    beat = {"ts": NOW - age, **({"ttl": ttl} if ttl is not None else {})}
    assert is_alive(read_heartbeat(json.dumps(beat)), NOW) is alive
