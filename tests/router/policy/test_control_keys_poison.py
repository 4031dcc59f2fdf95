"""What the control login can write, in shapes no guard listed: the live kill switch nested past the
stack or holding a number past any float, owner decisions whose time is NaN, `true`, missing or
huge, and decided ids that are no approval id (not UTF-8, a megabyte, a pattern). The switch reads
as on (fail closed: writes are refused `kill_switch`, the heartbeat says so), a decision without a
readable time never runs (its approval is set aside), junk ids leave no trace in a router's taken
list, and no router stops."""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import pytest
import redis

from tests.router.router_helpers import (
    RouterProcess,
    WorkerThread,
    note_lines,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)

DEEP = b"[" * 100_000 + b"]" * 100_000
DIGITS = b"7" * 4000  # parses (under Python's 4,300-digit limit), but no float holds it
SWITCHES = {
    "nested-past-the-stack": DEEP,
    "nested-inside-an-object": b'{"on": false, "x": ' + DEEP + b"}",
    "past-the-digit-limit": b'{"on": false, "ts": ' + b"7" * 5000 + b"}",
}
DECISION_TIMES = {"nan": b"NaN", "minus-infinity": b"-Infinity", "true": b"true", "text": b'"1"',
                  "past-any-float": DIGITS, "missing": None}
JUNK_IDS = [b"x", b"\xff\xfe", b"*", b"a" * 32, b"b" * 1_000_000]


@pytest.fixture
def control(redis_urls):
    client = redis.Redis.from_url(redis_urls.control_url)
    yield client
    client.close()


def heartbeat(admin: redis.Redis, keys: Any, router_id: str = "r1") -> dict[str, Any]:
    raw = admin.get(keys.router_heartbeat(router_id))
    return json.loads(raw) if raw else {}


@pytest.mark.parametrize("value", list(SWITCHES.values()), ids=list(SWITCHES))
def test_a_kill_switch_no_parser_can_read_is_on(redis_urls, admin, control, tmp_path, value):
    keys = redis_urls.keys
    control.set(keys.kill_switch, value)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)) as worker:
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "a note"}))
        assert (reply["status"], reply["error"]) == ("denied", "kill_switch"), reply
        wait_until(lambda: "kill_switch" in heartbeat(admin, keys), "the heartbeat to show the switch", 15)
        assert heartbeat(admin, keys)["kill_switch"]["on"] is True
        assert not worker.stop_event.is_set()
    assert note_lines(tmp_path) == [] and admin.llen(keys.dead_letter) == 0


def test_a_kill_switch_off_with_a_time_no_float_holds_is_off_and_beats(redis_urls, admin, control, tmp_path):
    keys = redis_urls.keys
    control.set(keys.kill_switch, b'{"on": false, "by": {"not": "text"}, "ts": ' + DIGITS + b"}")
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        assert reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "a note"}))["status"] == "ok"
        wait_until(lambda: "kill_switch" in heartbeat(admin, keys), "the heartbeat to show the switch", 15)
        assert heartbeat(admin, keys)["kill_switch"] == {"on": False, "source": "", "by": "", "since": None}


def decision(ts: bytes | None) -> bytes:
    return b'{"decision": "approve", "by": "x"' + (b', "ts": ' + ts if ts is not None else b"") + b"}"


@pytest.mark.parametrize("ts", list(DECISION_TIMES.values()), ids=list(DECISION_TIMES))
def test_an_approval_whose_decision_time_is_unreadable_never_runs(redis_urls, admin, control, tmp_path, ts):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE")
    with WorkerThread(settings) as worker:
        held = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "needs the owner"}, conversation="telegram:1"))
        approval_id = held["approval_id"]
        control.set(keys.approval_decision(approval_id), decision(ts))
        control.lpush(keys.approvals_decided, approval_id)
        wait_until(lambda: json.loads(admin.get(keys.approval(approval_id)))["state"] != "pending",
                   "the approval settled", 20)
        assert json.loads(admin.get(keys.approval(approval_id)))["state"] == "failed"
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
        assert not worker.stop_event.is_set()
    assert note_lines(tmp_path) == []
    assert any(approval_id in entry for entry in admin.lrange(keys.dead_letter, 0, -1))


def test_decided_ids_that_are_no_approval_id_leave_no_trace(redis_urls, admin, control, tmp_path):
    keys = redis_urls.keys
    for junk in JUNK_IDS:
        control.lpush(keys.approvals_decided, junk)
    admin.lpush(keys.approvals_taken("r1"), b"\xff\xfe")  # left by this router before a crash
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        wait_until(lambda: admin.llen(keys.approvals_decided) == 0, "the junk taken", 20)
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
        wait_until(lambda: admin.llen(keys.approvals_taken("r1")) == 0, "the taken list empty", 20)


@pytest.mark.slow
def test_a_fleet_outlives_every_control_key_shape_and_restarts(redis_urls, admin, control, tmp_path):
    keys = redis_urls.keys
    env = {"ROUTER_REQUIRE_APPROVAL": "NOTE"}
    routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id=r, **env)) for r in ("r1", "r2")]
    try:
        approvals = []
        for ts in DECISION_TIMES.values():
            held = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "held"}, conversation="telegram:1"),
                            timeout=30)
            approvals.append(held["approval_id"])
            control.set(keys.approval_decision(held["approval_id"]), decision(ts))
            control.lpush(keys.approvals_decided, held["approval_id"])
        for junk in JUNK_IDS:
            control.lpush(keys.approvals_decided, junk)
        for value in SWITCHES.values():
            control.set(keys.kill_switch, value)
            reply = reply_of(admin, keys, push(admin, keys, "SLOW_NOTE", {"text": "not now"}), timeout=30)
            assert (reply["status"], reply["error"]) == ("denied", "kill_switch"), reply
        for approval_id in approvals:
            wait_until(lambda a=approval_id: json.loads(admin.get(keys.approval(a)))["state"] == "failed",
                       "each approval set aside", 30)
        for router in routers:
            router.signal(signal.SIGTERM)
            assert router.wait(30) == 0, router.log_path.read_text()
        routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id=r, **env))
                   for r in ("r1", "r2")]
        time.sleep(2)
        for _ in range(4):
            assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        for router_id, router in zip(("r1", "r2"), routers, strict=True):
            assert router.process.poll() is None, router.log_path.read_text()
            wait_until(lambda r=router_id: heartbeat(admin, keys, r).get("kill_switch", {}).get("on") is True,
                       f"{router_id} beating with the switch on", 20)
            assert admin.llen(keys.approvals_taken(router_id)) == 0
        assert note_lines(tmp_path) == []
    finally:
        for router in routers:
            router.stop()
