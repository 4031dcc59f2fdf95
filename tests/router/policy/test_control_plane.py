"""The router's control plane against a real redis-server: approvals that run exactly once, the
live kill switch, the audit log, owner notices and decisions relayed from a chat."""

from __future__ import annotations

import json
import time

import pytest
import redis

from protocol import approvals
from protocol.commands import CommandEnvelope
from router.audit.chain_check import verify_directory
from router.policy import kill_switch
from tests.router.router_helpers import (
    WorkerThread,
    note_lines,
    push,
    reply_of,
    settings_for,
    wait_until,
)


@pytest.fixture
def control(redis_urls):
    client = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def keys(redis_urls):
    return redis_urls.keys


def approval_settings(redis_urls, tmp_path, router_id="r1", **extra):
    extra.setdefault("ROUTER_CHAT_APPROVALS", "true")
    return settings_for(redis_urls.router_url, tmp_path, router_id, ROUTER_REQUIRE_APPROVAL="NOTE", **extra)


def notices(admin, keys):
    return [json.loads(n) for n in reversed(admin.lrange(keys.owner_notices, 0, -1))]


def audit_records(tmp_path):
    lines = []
    for path in sorted((tmp_path / "audit").glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines()]
    return lines


def ask(admin, keys, text="needs the owner"):
    reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": text}, conversation="telegram:42"))
    assert reply["status"] == "pending_approval", reply
    return reply["approval_id"]


def test_held_command_is_stored_and_the_owner_told_with_a_code(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
    assert note_lines(tmp_path) == []
    [view] = approvals.pending(control, keys)
    assert view["id"] == approval_id and view["text"] == "needs the owner" and view["platform"] == "router"
    assert view["conversation"] == "telegram:42" and view["expires_at"] - view["requested_at"] == 24 * 3600
    [notice] = notices(admin, keys)
    assert notice["type"] == "approval_requested" and notice["approval_id"] == approval_id
    assert notice["conversation"] == "telegram:42" and len(notice["owner_code"]) >= 16
    assert notice["owner_code"] not in admin.get(keys.approval(approval_id))  # only its digest is stored


def test_approved_runs_exactly_once_even_approved_twice(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        approvals.decide(control, keys, approval_id, "approve", "dashboard")
        with pytest.raises(approvals.ApprovalError, match="already"):
            approvals.decide(control, keys, approval_id, "approve", "dashboard")
        control.lpush(keys.approvals_decided, approval_id)  # a second push of the same decision
        control.lpush(keys.approvals_decided, approval_id)
        wait_until(lambda: note_lines(tmp_path), "the approved note")
        wait_until(lambda: admin.llen(keys.approvals_decided) == 0, "the decided list to drain")
        time.sleep(0.3)
    assert [n["text"] for n in note_lines(tmp_path)] == ["needs the owner"]
    record = json.loads(admin.get(keys.approval(approval_id)))
    assert record["state"] == "approved" and record["outcome"]["status"] == "ok"
    assert approvals.pending(control, keys) == []
    settled = [n for n in notices(admin, keys) if n["type"] == "approval_settled"]
    assert len(settled) == 1 and settled[0]["state"] == "approved" and settled[0]["status"] == "ok"
    assert settled[0]["conversation"] == "telegram:42"


def test_a_router_restart_between_run_and_settle_never_runs_it_again(
    redis_urls, admin, control, keys, tmp_path
):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        approvals.decide(control, keys, approval_id, "approve", "dashboard")
        wait_until(lambda: note_lines(tmp_path), "the approved note")
    # As if the router died after running it and before settling: pending again, still held.
    record = json.loads(admin.get(keys.approval(approval_id)))
    admin.set(keys.approval(approval_id), json.dumps({**record, "state": "pending"}))
    admin.lpush(keys.approvals_taken("r1"), approval_id)
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        wait_until(lambda: admin.llen(keys.approvals_taken("r1")) == 0, "the recovery")
    assert len(note_lines(tmp_path)) == 1
    assert json.loads(admin.get(keys.approval(approval_id)))["state"] == "approved"


def test_approved_while_no_router_runs_when_one_starts(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
    approvals.decide(control, keys, approval_id, "approve", "cli")
    with WorkerThread(approval_settings(redis_urls, tmp_path, router_id="r2")):
        wait_until(lambda: note_lines(tmp_path), "the approved note")
    assert len(note_lines(tmp_path)) == 1


def test_denied_never_runs(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        approvals.decide(control, keys, approval_id, "deny", "dashboard")
        wait_until(lambda: json.loads(admin.get(keys.approval(approval_id)))["state"] == "denied", "denied")
        with pytest.raises(approvals.ApprovalError):
            approvals.decide(control, keys, approval_id, "approve", "dashboard")
        time.sleep(0.3)
    assert note_lines(tmp_path) == []
    assert [n["state"] for n in notices(admin, keys) if n["type"] == "approval_settled"] == ["denied"]
    assert any(
        r.get("decision") == "denied" and r.get("approval_id") == approval_id for r in audit_records(tmp_path)
    )


@pytest.mark.slow
def test_expired_never_runs(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        record = json.loads(admin.get(keys.approval(approval_id)))
        past = time.time() - 1
        admin.set(keys.approval(approval_id), json.dumps({**record, "expires_at": past}))
        admin.zadd(keys.approvals_pending, {approval_id: past})
        with pytest.raises(approvals.ApprovalError, match="expired"):
            approvals.decide(control, keys, approval_id, "approve", "dashboard")
        wait_until(
            lambda: json.loads(admin.get(keys.approval(approval_id)))["state"] == "expired",
            "expiry",
            deadline_seconds=15,
        )
    assert note_lines(tmp_path) == []
    assert [n["state"] for n in notices(admin, keys) if n["type"] == "approval_settled"] == ["expired"]


def test_a_decision_written_after_expiry_never_runs(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
    record = json.loads(admin.get(keys.approval(approval_id)))
    admin.set(keys.approval(approval_id), json.dumps({**record, "expires_at": time.time() + 0.05}))
    time.sleep(0.1)
    # Forged past the dashboard's own check: the router still refuses it.
    control.set(keys.approval_decision(approval_id), json.dumps({"decision": "approve", "ts": time.time()}))
    control.lpush(keys.approvals_decided, approval_id)
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        wait_until(lambda: json.loads(admin.get(keys.approval(approval_id)))["state"] == "expired", "expired")
    assert note_lines(tmp_path) == []


def test_live_kill_switch_within_a_second_no_restart(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        assert reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "before"}))["status"] == "ok"
        kill_switch.flip(control, keys, True, "dashboard")
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "during"}))
        # The very next command, with no wait and no restart: the switch is read per command.
        assert (
            reply["status"] == "denied"
            and reply["error"] == "kill_switch"
            and "dashboard" in reply["message"]
        )
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"  # reads still work
        kill_switch.flip(control, keys, False, "dashboard")
        assert reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "after"}))["status"] == "ok"
    assert [n["text"] for n in note_lines(tmp_path)] == ["before", "after"]


@pytest.mark.parametrize("value", ["not json", '{"on": "false"}', "[]", '{"on": null}'])
def test_an_unreadable_kill_switch_fails_closed(redis_urls, admin, keys, tmp_path, value):
    admin.set(keys.kill_switch, value)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))
    assert reply["error"] == "kill_switch" and note_lines(tmp_path) == []


def test_environment_kill_switch_is_a_floor_the_dashboard_cannot_lift(
    redis_urls, admin, control, keys, tmp_path
):
    kill_switch.flip(control, keys, False, "dashboard")
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_KILL_SWITCH="true")):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))
    assert reply["error"] == "kill_switch" and "ROUTER_KILL_SWITCH" in reply["message"]


def test_an_approved_command_still_obeys_the_kill_switch(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        kill_switch.flip(control, keys, True, "dashboard")
        approvals.decide(control, keys, approval_id, "approve", "dashboard")
        wait_until(
            lambda: json.loads(admin.get(keys.approval(approval_id)))["state"] == "approved", "settled"
        )
    assert note_lines(tmp_path) == []
    assert json.loads(admin.get(keys.approval(approval_id)))["outcome"]["status"] == "denied"


def test_every_command_is_audited_chained_and_mirrored(redis_urls, admin, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        reply_of(admin, keys, push(admin, keys, "PING", {}, conversation="console"))
        ask(admin, keys)
        reply_of(admin, keys, push(admin, keys, "NOPE", {}, conversation="autonomy"))
        envelope = CommandEnvelope.new("PING", {}, "console", ttl_seconds=-1)
        admin.lpush(keys.command_queue, envelope.to_json())
        reply_of(admin, keys, envelope.id)
        admin.lpush(keys.command_queue, "not json at all")
        wait_until(lambda: len(audit_records(tmp_path)) == 5, "five audit lines")
    records = audit_records(tmp_path)
    assert verify_directory(tmp_path / "audit").ok
    assert [r["decision"] for r in records] == [
        "allowed",
        "pending_approval",
        "refused: unknown_command",
        "refused: expired",
        "refused: malformed",
    ]
    assert records[0]["origin"] == {
        "channel": "console", "conversation": "console", "kind": "owner", "via": "console", "taint": []
    }
    assert records[1]["effect"] == {"platform": "router", "kind": "post", "target": None}
    assert records[1]["text"] == "needs the owner" and records[1]["approval_id"]
    assert records[2]["origin"]["conversation"] == "autonomy"
    assert records[3]["origin"]["kind"] == "unknown"  # sent without an origin
    stream = [json.loads(fields["line"]) for _id, fields in admin.xrange(keys.audit_stream)]
    assert stream == records


def test_the_audit_log_holds_no_secret(redis_urls, admin, keys, tmp_path):
    secret = "planted-" + "secret-value-8c1d"
    settings = settings_for(
        redis_urls.router_url, tmp_path, BSKY_HANDLE="me.bsky.social", BSKY_PASSWORD=secret
    )
    with WorkerThread(settings, credentials={"BSKY_HANDLE": "me.bsky.social", "BSKY_PASSWORD": secret}):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": f"my password is {secret}"}))
        wait_until(lambda: audit_records(tmp_path), "the audit line")
    assert reply["status"] == "denied"
    text = "".join(p.read_text() for p in (tmp_path / "audit").glob("*.jsonl"))
    assert secret not in text and secret not in json.dumps(admin.xrange(keys.audit_stream))


def test_a_decision_relayed_from_a_chat_needs_the_owner_code(redis_urls, admin, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
        [notice] = notices(admin, keys)
        code = notice["owner_code"]
        near_miss = code[:-1] + ("y" if code.endswith("x") else "x")
        for wrong in ("", "guess", near_miss):
            params = {"approval_id": approval_id, "decision": "approve", "code": wrong}
            reply = reply_of(admin, keys, push(admin, keys, "APPROVAL_DECISION", params))
            assert reply["status"] == "denied" and reply["error"] == "approval_refused"
        assert note_lines(tmp_path) == []
        params = {"approval_id": approval_id, "decision": "approve", "code": notice["owner_code"]}
        assert reply_of(admin, keys, push(admin, keys, "APPROVAL_DECISION", params))["status"] == "ok"
        again = reply_of(admin, keys, push(admin, keys, "APPROVAL_DECISION", params))
        assert again["status"] == "denied"
        wait_until(lambda: note_lines(tmp_path), "the approved note")
        time.sleep(0.3)
    assert len(note_lines(tmp_path)) == 1


def test_the_same_command_held_twice_makes_one_approval(redis_urls, admin, control, keys, tmp_path):
    envelope = CommandEnvelope.new("NOTE", {"text": "once"}, "console", ttl_seconds=60)
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        admin.lpush(keys.command_queue, envelope.to_json())
        first = reply_of(admin, keys, envelope.id)
        admin.lpush(keys.command_queue, envelope.to_json())
        second = reply_of(admin, keys, envelope.id)
    assert first["approval_id"] == second["approval_id"]
    assert len(approvals.pending(control, keys)) == 1
    assert len([n for n in notices(admin, keys) if n["type"] == "approval_requested"]) == 1


def test_heartbeat_says_floor_and_audit_head(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_KILL_SWITCH="true")):
        beat = wait_until(lambda: admin.get(keys.router_heartbeat("r1")), "a heartbeat")
    value = json.loads(beat)
    assert value["kill_switch_floor"] is True and set(value["audit"]) == {"seq", "hash"}


def test_a_command_refused_anyway_is_never_held(redis_urls, admin, control, keys, tmp_path):
    secret = "planted-" + "secret-value-4e2a"
    settings = approval_settings(redis_urls, tmp_path, BSKY_HANDLE="me.bsky.social", BSKY_PASSWORD=secret)
    with WorkerThread(settings, credentials={"BSKY_HANDLE": "me.bsky.social", "BSKY_PASSWORD": secret}):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": f"the password is {secret}"}))
        assert reply["error"] == "secret_in_text"
        kill_switch.flip(control, keys, True, "dashboard")
        assert reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))["error"] == "kill_switch"
    assert approvals.pending(control, keys) == []
    assert secret not in json.dumps([admin.get(k) for k in admin.keys(keys.approval("*"))])


def test_a_decision_whose_wake_up_was_lost_still_runs_once(redis_urls, admin, control, keys, tmp_path):
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        approval_id = ask(admin, keys)
    # The decision was written but its push on the decided list never happened (a Redis blip).
    decided_at = time.time() - 60
    control.set(keys.approval_decision(approval_id), json.dumps({"decision": "approve", "ts": decided_at}))
    with WorkerThread(approval_settings(redis_urls, tmp_path)):
        wait_until(lambda: note_lines(tmp_path), "the approved note", deadline_seconds=20)
        time.sleep(0.5)
    assert len(note_lines(tmp_path)) == 1


def test_with_chat_approvals_off_even_the_right_code_is_refused_and_the_control_user_decides(
    redis_urls, admin, control, keys, tmp_path
):
    with WorkerThread(approval_settings(redis_urls, tmp_path, ROUTER_CHAT_APPROVALS="off")):
        approval_id = ask(admin, keys)
        [notice] = notices(admin, keys)
        assert notice["owner_code"] == ""
        stored = json.loads(admin.get(keys.approval(approval_id)))
        for code in ("", "guess", str(stored.get("owner_code_sha256"))):
            params = {"approval_id": approval_id, "decision": "approve", "code": code}
            reply = reply_of(admin, keys, push(admin, keys, "APPROVAL_DECISION", params))
            assert reply["status"] == "denied" and reply["error"] == "approval_refused"
        assert note_lines(tmp_path) == []
        approvals.decide(control, keys, approval_id, "approve", "dashboard")
        wait_until(lambda: note_lines(tmp_path), "the note the dashboard approved")
    assert len(note_lines(tmp_path)) == 1


def test_by_default_the_agent_login_reads_no_code_and_cannot_approve_its_own_held_command(
    redis_urls, admin, control, keys, tmp_path
):
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE")
    agent = redis.Redis.from_url(redis_urls.agent_url, decode_responses=True)
    try:
        with WorkerThread(settings):
            approval_id = ask(admin, keys)
            raw = agent.lmove(keys.owner_notices, keys.owner_notices_inflight, "RIGHT", "LEFT")
            assert json.loads(raw)["owner_code"] == ""  # the whole notice, as the agent login reads it
            with pytest.raises(redis.exceptions.NoPermissionError):
                agent.get(keys.approval(approval_id))
            params = {"approval_id": approval_id, "decision": "approve", "code": ""}
            reply = reply_of(admin, keys, push(admin, keys, "APPROVAL_DECISION", params))
            assert reply["status"] == "denied" and reply["error"] == "approval_refused"
            assert note_lines(tmp_path) == []
            assert [v["state"] for v in approvals.pending(control, keys)] == ["pending"]
    finally:
        agent.close()


@pytest.mark.parametrize("value", ["maybe", "2", "enabled"])
def test_a_chat_approvals_setting_that_is_not_a_yes_or_no_stops_the_router(redis_urls, tmp_path, value):
    from router.config.settings import RouterSettings
    from router.errors import ConfigError

    with pytest.raises(ConfigError, match="ROUTER_CHAT_APPROVALS"):
        RouterSettings.from_env({"REDIS_URL": redis_urls.router_url, "ROUTER_CHAT_APPROVALS": value})
