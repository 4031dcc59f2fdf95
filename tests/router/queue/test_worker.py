"""The router loop in-process against a real redis-server: checks, idempotency, recovery, poison."""

import json
import time

import pytest

from protocol.commands import CommandEnvelope
from protocol.keys import AGENT_LOGIN
from protocol.replies import Reply, Status
from router.app import build_worker
from router.errors import SkillError
from router.registry import Skill
from tests.router.router_helpers import (
    MY_SKILLS,
    WorkerThread,
    note_lines,
    push,
    reply_of,
    settings_for,
    wait_until,
)


@pytest.fixture
def keys(redis_urls):
    return redis_urls.keys


def test_ping_round_trip(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert reply["status"] == "ok" and reply["result"] == {"pong": True, "router_id": "r1"}
    assert admin.llen(keys.processing("r1")) == 0


def test_note_written_once_and_reply_has_ttl(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        cid = push(admin, keys, "NOTE", {"text": "hello"})
        wait_until(lambda: admin.exists(keys.response(cid)), "the reply")
        assert 0 < admin.ttl(keys.response(cid)) <= 3600
        reply = reply_of(admin, keys, cid)
    assert reply["status"] == "ok"
    assert [line["text"] for line in note_lines(tmp_path)] == ["hello"]
    assert json.loads(admin.get(keys.idempotency(cid)))["state"] == "done"


def test_same_command_twice_runs_once_and_resends_reply(redis_urls, admin, keys, tmp_path):
    envelope = CommandEnvelope.new("NOTE", {"text": "once"}, "t", ttl_seconds=60)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        admin.lpush(keys.command_queue, envelope.to_json())
        first = reply_of(admin, keys, envelope.id)
        admin.lpush(keys.command_queue, envelope.to_json())
        second = reply_of(admin, keys, envelope.id)
    assert first == second and first["status"] == "ok"
    assert len(note_lines(tmp_path)) == 1


@pytest.mark.parametrize(
    ("action", "params", "error"),
    [
        ("DELETE_EVERYTHING", {}, "unknown_command"),
        ("NOTE", {}, "invalid_params"),
        ("NOTE", {"text": "x", "to": "everyone"}, "invalid_params"),
        ("NOTE", {"text": 42}, "invalid_params"),
        ("PING", {"x": 1}, "invalid_params"),
    ],
)
def test_unknown_action_and_invalid_params_denied_never_run(redis_urls, admin, keys, tmp_path, action, params,
                                                            error):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, push(admin, keys, action, params))
    assert reply["status"] == "denied" and reply["error"] == error and reply["message"]
    assert note_lines(tmp_path) == []


def test_expired_command_answered_expired_never_run(redis_urls, admin, keys, tmp_path):
    envelope = CommandEnvelope.new("NOTE", {"text": "too late"}, "t", ttl_seconds=60)
    envelope.expires_at = time.time() - 1
    admin.lpush(keys.command_queue, envelope.to_json())
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, envelope.id)
    assert reply["status"] == "expired"
    assert note_lines(tmp_path) == []
    assert admin.get(keys.idempotency(envelope.id)) is None


def test_malformed_json_dead_lettered(redis_urls, admin, keys, tmp_path):
    admin.lpush(keys.command_queue, "{not json")
    # The id is readable, the rest is missing: the sender still gets an answer.
    admin.lpush(keys.command_queue, json.dumps({"id": "abc123", "action": "NOTE"}))
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, "abc123")
        wait_until(lambda: admin.llen(keys.dead_letter) == 2, "two dead letters")
    assert reply["status"] == "error" and "set aside" in reply["message"]
    reasons = [json.loads(e)["reason"] for e in admin.lrange(keys.dead_letter, 0, -1)]
    assert all(r.startswith("malformed command") for r in reasons)
    assert admin.llen(keys.processing("r1")) == 0


def test_poison_command_dead_lettered_after_max_attempts(redis_urls, admin, keys, tmp_path):
    calls = []

    def explode(params, ctx):
        calls.append(ctx.command_id)
        raise RuntimeError("boom")

    skills = {**MY_SKILLS, "EXPLODE": Skill("EXPLODE", "always crashes", {"type": "object"}, False, explode)}
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_MAX_ATTEMPTS="3"), skills):
        reply = reply_of(admin, keys, push(admin, keys, "EXPLODE", {}))
        after = reply_of(admin, keys, push(admin, keys, "PING", {}))  # the router lives on
    assert len(calls) == 3
    assert reply["status"] == "error" and reply["error"] == "internal_error"
    assert "3 times" in reply["message"]
    [entry] = [json.loads(e) for e in admin.lrange(keys.dead_letter, 0, -1)]
    assert entry["action"] == "EXPLODE" and "crashed 3 times" in entry["reason"]
    assert "RuntimeError" in entry["reason"]
    assert after["status"] == "ok"


def test_a_crashing_side_effect_is_never_retried(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_MAX_ATTEMPTS="3")):
        envelope = CommandEnvelope.new("SLOW_NOTE", {"text": "x", "crash": True}, "t", ttl_seconds=120)
        admin.lpush(keys.command_queue, envelope.to_json())
        reply = reply_of(admin, keys, envelope.id)
        admin.lpush(keys.command_queue, envelope.to_json())  # delivered again
        again = reply_of(admin, keys, envelope.id)
    assert reply["status"] == "unknown" and reply["error"] == "crashed"
    assert again == reply  # a re-delivered copy gets the stored answer, and nothing runs
    [entry] = [json.loads(e) for e in admin.lrange(keys.dead_letter, 0, -1)]
    assert entry["action"] == "SLOW_NOTE" and "not retried" in entry["reason"]


@pytest.mark.parametrize("hook", [{"crash": True}, {"delay_seconds": 1}])
def test_the_shipped_note_has_no_test_hooks(redis_urls, admin, keys, tmp_path, hook):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x", **hook}))
    assert reply["status"] == "denied" and reply["error"] == "invalid_params"
    assert admin.llen(keys.dead_letter) == 0 and note_lines(tmp_path) == []


def plant_in_processing(admin, keys, router_id, envelope, record=None):
    admin.lpush(keys.processing(router_id), envelope.to_json())
    if record is not None:
        admin.set(keys.idempotency(envelope.id), json.dumps(record))


def test_recovery_of_own_processing_list(redis_urls, admin, keys, tmp_path):
    never_started = CommandEnvelope.new("NOTE", {"text": "run me"}, "t", 60)
    started = CommandEnvelope.new("NOTE", {"text": "do not rerun"}, "t", 60)
    done = CommandEnvelope.new("NOTE", {"text": "already done"}, "t", 60)
    stored = Reply(done.id, Status.OK, result={"written": True, "stored": 1}).to_dict()
    plant_in_processing(admin, keys, "r1", never_started)
    plant_in_processing(admin, keys, "r1", started, {"state": "started"})
    plant_in_processing(admin, keys, "r1", done, {"state": "done", "reply": stored})
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        replies = {e.id: reply_of(admin, keys, e.id) for e in (never_started, started, done)}
    assert replies[never_started.id]["status"] == "ok"
    assert replies[started.id]["status"] == "unknown"
    assert replies[done.id] == stored
    assert [line["text"] for line in note_lines(tmp_path)] == ["run me"]
    assert admin.llen(keys.processing("r1")) == 0


def test_recovery_of_dead_router_list_only_when_heartbeat_gone(redis_urls, admin, keys, tmp_path):
    alive, dead = CommandEnvelope.new("PING", {}, "t", 60), CommandEnvelope.new("PING", {}, "t", 60)
    plant_in_processing(admin, keys, "alive", alive)
    admin.set(keys.router_heartbeat("alive"), "{}", ex=60)
    plant_in_processing(admin, keys, "dead", dead)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        assert reply_of(admin, keys, dead.id)["status"] == "ok"
    assert admin.llen(keys.processing("alive")) == 1 and not admin.exists(keys.response(alive.id))


def test_kill_switch_denies_side_effects_only(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_KILL_SWITCH="1")):
        note = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))
        ping = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert note["status"] == "denied" and note["error"] == "kill_switch"
    assert ping["status"] == "ok" and note_lines(tmp_path) == []


def test_rate_limit_denies_with_retry_time(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_RATE_LIMITS="NOTE=2/3600")):
        replies = [reply_of(admin, keys, push(admin, keys, "NOTE", {"text": str(i)})) for i in range(3)]
    assert [r["status"] for r in replies] == ["ok", "ok", "denied"]
    assert replies[2]["error"] == "rate_limited" and "retry in" in replies[2]["message"]
    assert len(note_lines(tmp_path)) == 2


def test_approval_required_is_pending_never_run(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE")):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))
    assert reply["status"] == "pending_approval" and note_lines(tmp_path) == []


def test_dry_run_marks_reply_and_writes_nothing(redis_urls, admin, keys, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="true")):
        reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "x"}))
    assert reply["status"] == "ok" and reply["dry_run"] is True and note_lines(tmp_path) == []


def test_heartbeat_lists_skills_and_platforms(redis_urls, admin, keys, tmp_path):
    credentials = {"MOLTBOOK_API_KEY": "moltbook-key-123"}
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), credentials=credentials):
        beat = json.loads(wait_until(lambda: admin.get(keys.router_heartbeat("r1")), "a heartbeat"))
    assert beat["skills"] == ["NOTE", "PING", "SLOW_NOTE"] and beat["platforms_with_credentials"] == ["moltbook"]
    assert beat["router_id"] == "r1" and beat["ts"] >= beat["started_at"]
    assert admin.get(keys.router_heartbeat("r1")) is None  # removed on a clean stop


def test_wrong_router_password_is_a_config_error(redis_urls, tmp_path):
    from router.errors import ConfigError
    bad_url = redis_urls.router_url.replace("router:", "router:x", 1)
    worker = build_worker(settings_for(bad_url, tmp_path), MY_SKILLS, {})
    with pytest.raises(ConfigError, match="REDIS_URL"):
        worker.run()


def test_a_side_effect_whose_request_failed_is_unknown_not_error(redis_urls, admin, keys, tmp_path):
    # A timeout or a 5xx after the request was sent: the post may exist. "error" would tell the
    # agent it did not happen, and the agent repeats failed actions (a second post).
    def lost_answer(params, ctx):
        raise SkillError("request_failed", "mastodon did not answer the post in time")

    schema = {"type": "object"}
    skills = {**MY_SKILLS, "POST_IT": Skill("POST_IT", "posts", schema, True, lost_answer),
              "READ_IT": Skill("READ_IT", "reads", schema, False, lost_answer)}
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), skills):
        posted = reply_of(admin, keys, push(admin, keys, "POST_IT", {}))
        read = reply_of(admin, keys, push(admin, keys, "READ_IT", {}))
    assert posted["status"] == "unknown" and posted["error"] == "request_failed"
    assert "may or may not" in posted["message"]
    assert read["status"] == "error" and read["error"] == "request_failed"


def test_a_lone_surrogate_is_refused_and_the_router_lives_on(redis_urls, admin, keys, tmp_path):
    # JSON may escape half an emoji ("\ud83d"): valid JSON, not valid Unicode, and Redis
    # (UTF-8) cannot take it back in a reply that echoes it (a dry run echoes its params).
    surrogate = CommandEnvelope.new("NOTE", {"text": "hi"}, "t", ttl_seconds=120)
    raw = surrogate.to_json().replace('"hi"', '"hi \\ud83d"')

    def echo(params, ctx):
        return {"name": "Mallory \udc00"}  # what a careless platform field could hold

    skills = {**MY_SKILLS, "ECHO": Skill("ECHO", "echoes", {"type": "object"}, False, echo)}
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="true"), skills):
        admin.lpush(keys.command_queue, raw)
        refused = reply_of(admin, keys, surrogate.id)
        echoed = reply_of(admin, keys, push(admin, keys, "ECHO", {}))
        after = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert refused["status"] == "denied" and refused["error"] == "invalid_params"
    assert "Unicode" in refused["message"]
    assert echoed["status"] == "ok" and echoed["result"]["name"].startswith("Mallory")
    assert after["status"] == "ok"


def test_a_result_that_is_not_json_is_a_crash_not_the_end_of_the_router(redis_urls, admin, keys, tmp_path):
    import datetime

    def dated(params, ctx):
        return {"when": datetime.datetime(2026, 1, 1)}

    skills = {**MY_SKILLS, "DATED": Skill("DATED", "returns a datetime", {"type": "object"}, False, dated)}
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, ROUTER_MAX_ATTEMPTS="2"), skills):
        reply = reply_of(admin, keys, push(admin, keys, "DATED", {}))
        after = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert reply["status"] == "error" and reply["error"] == "internal_error"
    assert after["status"] == "ok"


def test_a_deeply_nested_command_is_dead_lettered_and_the_router_lives_on(redis_urls, admin, keys, tmp_path):
    admin.lpush(keys.command_queue, "[" * 100_000 + "]" * 100_000)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        wait_until(lambda: admin.llen(keys.dead_letter) == 1, "the nested command dead-lettered")
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
    assert admin.llen(keys.processing("r1")) == 0


def test_a_busy_queue_is_answered_in_batches_each_command_once_none_lost(redis_urls, admin, keys, tmp_path):
    ids = [push(admin, keys, "PING", {}) for _ in range(40)]
    ids += [push(admin, keys, "NOTE", {"text": f"note {n}"}) for n in range(5)]
    late = CommandEnvelope.new("NOTE", {"text": "too late"}, "t", ttl_seconds=60)
    late.expires_at = time.time() - 1
    admin.lpush(keys.command_queue, late.to_json())
    admin.lpush(keys.command_queue, b"\xff not a command")
    ids += [push(admin, keys, "PING", {}) for _ in range(20)]
    thread = WorkerThread(settings_for(redis_urls.router_url, tmp_path))
    waits = []
    blmove = thread.worker.conn.blmove
    thread.worker.conn.blmove = lambda *args: waits.append(args) or blmove(*args)
    with thread as worker:
        replies = {cid: reply_of(admin, keys, cid) for cid in ids}
        late_reply = reply_of(admin, keys, late.id)
        wait_until(lambda: admin.llen(keys.processing("r1")) == 0, "the processing list to empty")
    assert all(reply["status"] == "ok" for reply in replies.values())
    assert late_reply["status"] == "expired"
    assert sorted(line["text"] for line in note_lines(tmp_path)) == [f"note {n}" for n in range(5)]
    assert not any(admin.exists(keys.response(cid)) for cid in [*ids, late.id]), "a command answered twice"
    assert admin.llen(keys.dead_letter) == 1 and admin.llen(keys.command_queue) == 0
    audited = [json.loads(line) for line in worker.audit.log.path.read_text().splitlines()]
    outcomes = [entry for entry in audited if entry["command_id"] and entry["status"] != "started"]
    assert sorted(entry["command_id"] for entry in outcomes) == sorted([*ids, late.id])
    started = [entry for entry in audited if entry["status"] == "started"]
    assert sorted(entry["text"] for entry in started) == [f"note {n}" for n in range(5)]  # before each write
    # Taken in batches with the replies' round trips, not one BLMOVE per command.
    assert len(waits) < len(ids) / 4, f"{len(waits)} BLMOVEs for {len(ids) + 2} commands"


def test_a_batch_takes_nothing_more_when_a_recovery_is_due_or_the_router_stops(redis_urls, admin, keys,
                                                                                  tmp_path):
    worker = build_worker(settings_for(redis_urls.router_url, tmp_path), MY_SKILLS, {})
    try:
        for _ in range(6):
            push(admin, keys, "PING", {})
        agent_queue = worker.taker(AGENT_LOGIN)
        first = worker.conn.lmove(keys.command_queue, agent_queue.processing, "RIGHT", "LEFT")
        agent_queue.next_recovery = time.monotonic() + 60
        agent_queue.handle_batch([first])
        assert len(agent_queue.taken) == 1  # the queue is busy: the reply's round trip took the next
        agent_queue.next_recovery = 0.0  # recovery due: it must find no command taken and unhandled
        agent_queue.handle_batch(agent_queue.taken)
        assert agent_queue.taken == []
        agent_queue.next_recovery = time.monotonic() + 60
        worker.stop()
        agent_queue.handle_batch([worker.conn.lmove(keys.command_queue, agent_queue.processing, "RIGHT", "LEFT")])
        assert agent_queue.taken == []
        assert admin.llen(keys.command_queue) == 3 and admin.llen(keys.processing("r1")) == 0
    finally:
        worker.audit.close()
        worker.conn.close()


def test_commands_taken_with_a_reply_are_answered_before_the_router_stops(redis_urls, admin, keys, tmp_path):
    ids = [push(admin, keys, "PING", {}) for _ in range(30)]
    thread = WorkerThread(settings_for(redis_urls.router_url, tmp_path))
    with thread:
        reply_of(admin, keys, ids[0])
    answered = sum(admin.llen(keys.response(cid)) for cid in ids[1:]) + 1
    assert admin.llen(keys.processing("r1")) == 0, "a taken command was left unanswered"
    assert answered + admin.llen(keys.command_queue) == len(ids)
def test_the_heartbeat_is_up_before_the_first_command_is_taken(redis_urls, admin, keys, tmp_path, monkeypatch):
    # The beat thread may be scheduled late on a loaded machine; meanwhile a second router must not
    # take the first one's list for a dead router's (its commands in hand would come back unknown).
    seen_at_first_take: list[bool] = []
    worker = WorkerThread(settings_for(redis_urls.router_url, tmp_path))
    monkeypatch.setattr(worker.worker.heartbeat, "loop", lambda conn: None)  # a beat thread that never runs
    agent_queue = worker.worker.taker(AGENT_LOGIN)
    taking = agent_queue.handle

    def handle(raw, *args, **kwargs):
        seen_at_first_take.append(bool(admin.exists(keys.router_heartbeat("r1"))))
        return taking(raw, *args, **kwargs)

    monkeypatch.setattr(agent_queue, "handle", handle)
    cid = push(admin, keys, "PING", {})
    with worker:
        assert reply_of(admin, keys, cid)["status"] == "ok"
    assert seen_at_first_take[:1] == [True]


def test_an_idle_router_answers_each_command_then_blocks_with_nothing_in_hand(redis_urls, admin, keys,
                                                                               tmp_path):
    """Its own BLMOVE (not the one in its reply's round trip) only ever with nothing taken."""
    thread = WorkerThread(settings_for(redis_urls.router_url, tmp_path))
    in_hand = []
    blmove = thread.worker.conn.blmove
    agent_queue = thread.worker.taker(AGENT_LOGIN)

    def agents_blmove(*args):  # the agent's queue's loop (the mcp queue's blocks in its own thread)
        if args[0] == keys.command_queue:
            in_hand.append(len(agent_queue.taken))
        return blmove(*args)

    thread.worker.conn.blmove = agents_blmove
    with thread:
        replies = [reply_of(admin, keys, push(admin, keys, "PING", {})) for _ in range(12)]
        wait_until(lambda: admin.llen(keys.processing("r1")) == 0, "the processing list to empty")
    assert [reply["status"] for reply in replies] == ["ok"] * 12
    # It blocks only when it took nothing (the reply's round trip took the next one if it had come).
    assert set(in_hand) <= {0}
    # Idle, the wait for the next command rides in the reply's round trip: few separate BLMOVEs.
    assert len(in_hand) <= 4, f"{len(in_hand)} separate BLMOVEs for 12 commands sent one at a time"
