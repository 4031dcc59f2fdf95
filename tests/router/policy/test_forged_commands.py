"""An attacker holding the agent's Redis login forges envelopes: another command's intent key,
another command's id, ids that are not ids. None of it reads another command's result, none of
it makes a command be answered with what a different command did, and none of it stops the router.
"""

import json

import pytest

from protocol.commands import CommandEnvelope
from protocol.wire import ProtocolError
from tests.router.router_helpers import WorkerThread, note_lines, reply_of, settings_for


def send(admin, keys, action, params, intent="", command_id=None):
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=60, intent=intent)
    if command_id is not None:
        envelope.id = command_id
    admin.lpush(keys.command_queue, envelope.to_json())
    return reply_of(admin, keys, envelope.id)


@pytest.mark.parametrize(
    ("action", "params"),
    [("NOTE", {"text": "the second, other words"}), ("SLOW_NOTE", {"text": "the first note"})],
)
def test_a_forged_intent_key_never_answers_a_different_command(redis_urls, admin, tmp_path, action, params):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        first = send(admin, keys, "NOTE", {"text": "the first note"}, intent="stolen-intent")
        second = send(admin, keys, action, params, intent="stolen-intent")
    assert first["status"] == "ok"
    assert second["status"] == "ok" and "repeat_of" not in second, second  # its own answer, it ran
    assert [line["text"] for line in note_lines(tmp_path)] == ["the first note", params["text"]]


def test_the_same_intent_with_the_same_words_is_still_answered_once(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        first = send(admin, keys, "NOTE", {"text": "once"}, intent="turn-9")
        again = send(admin, keys, "NOTE", {"text": "once"}, intent="turn-9")
    assert again["repeat_of"] == first["id"] and len(note_lines(tmp_path)) == 1


@pytest.mark.parametrize(
    ("action", "params"), [("NOTE", {"text": "b: other words"}), ("SLOW_NOTE", {"text": "a"})]
)
def test_a_reused_command_id_with_other_params_is_refused_never_answered_from_the_record(
    redis_urls, admin, tmp_path, action, params
):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        first = send(admin, keys, "NOTE", {"text": "a"}, command_id="cmd-1")
        second = send(admin, keys, action, params, command_id="cmd-1")
    assert first["status"] == "ok"
    assert (second["status"], second.get("error")) == ("denied", "id_reused"), second
    assert "result" not in second
    assert [line["text"] for line in note_lines(tmp_path)] == ["a"]


@pytest.mark.parametrize(
    "bad_id",
    ["a:b", "*", "safeclaw:*", "a b", "a\nINFO forged log line", "\u00e9", "x" * 129, "\ud800", "a/../b", ""],
)
def test_a_command_id_that_is_not_a_plain_token_is_a_malformed_command(bad_id):
    raw = json.dumps(
        {
            "id": bad_id,
            "action": "PING",
            "params": {},
            "conversation": "t",
            "created_at": 1.0,
            "expires_at": 2.0,
        }
    )
    with pytest.raises(ProtocolError, match="id"):
        CommandEnvelope.from_json(raw)


def test_forged_ids_reach_no_key_of_another_command_and_the_router_goes_on(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        for bad_id in ["*", "a:b", "x" * 5000, "\ud800"]:
            raw = json.dumps(
                {
                    "id": bad_id,
                    "action": "NOTE",
                    "params": {"text": "forged"},
                    "conversation": "t",
                    "created_at": 1.0,
                    "expires_at": 9e9,
                }
            )
            admin.lpush(keys.command_queue, raw)
        ping = send(admin, keys, "PING", {})
    assert ping["status"] == "ok"
    assert note_lines(tmp_path) == []
    assert admin.llen(keys.dead_letter) == 4
    assert not [k for k in admin.keys(keys.response("*")) if k != keys.response(ping["id"])]


@pytest.mark.parametrize("bad_v", ['"1"', "1.9", "true", "[1]", "null"])
def test_a_protocol_version_of_the_wrong_type_is_malformed(bad_v):
    raw = (
        '{"id": "a1", "action": "PING", "params": {}, "conversation": "t", '
        f'"created_at": 1.0, "expires_at": 2.0, "v": {bad_v}}}'
    )
    with pytest.raises(ProtocolError, match="'v'"):
        CommandEnvelope.from_json(raw)


@pytest.mark.parametrize("expires_at", [1e308, 4e9, "far"])
def test_a_command_that_would_never_expire_is_refused_and_never_run(redis_urls, admin, tmp_path, expires_at):
    keys = redis_urls.keys
    envelope = CommandEnvelope.new("NOTE", {"text": "from the far future"}, "t", ttl_seconds=60)
    envelope.expires_at = envelope.created_at + 2 * 24 * 3600 if expires_at == "far" else expires_at
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        admin.lpush(keys.command_queue, envelope.to_json())
        reply = reply_of(admin, keys, envelope.id)
    assert (reply["status"], reply["error"]) == ("denied", "invalid_expiry"), reply
    assert note_lines(tmp_path) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("action", "NOTE\n2026-11-22 00:00:00 INFO safeclaw.router forged line"),
        ("action", "PING\r"),
        ("action", "A" * 200),
        ("action", ""),
        ("conversation", "t\n2026-11-22 00:00:00 INFO safeclaw.router forged line"),
        ("conversation", "t\x1b[2J"),
        ("conversation", "c" * 1000),
    ],
)
def test_an_action_or_conversation_that_could_forge_a_log_line_is_malformed(field, value):
    data = {
        "id": "a1",
        "action": "PING",
        "params": {},
        "conversation": "t",
        "created_at": 1.0,
        "expires_at": 2.0,
    }
    with pytest.raises(ProtocolError, match=field):
        CommandEnvelope.from_json(json.dumps({**data, field: value}))


def test_a_forged_command_with_an_approved_commands_id_is_still_held(redis_urls, tmp_path):
    """Approved is a field of the run built from the approval's stored command: a copy sent with
    the same id (other words) is a run of its own and waits, even while the approved one runs."""
    from protocol.keys import AGENT_LOGIN
    from router.app import build_worker
    from router.queue.command_run import CommandRun
    from router.skills.note.skill import SKILL as NOTE

    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE")
    worker = build_worker(settings, {"NOTE": NOTE}, {})
    approved = CommandEnvelope.new("NOTE", {"text": "what the owner approved"}, "t", ttl_seconds=60)
    forged = CommandEnvelope.new("NOTE", {"text": "something else entirely"}, "t", ttl_seconds=60)
    forged.id = approved.id
    approval = {"id": "a1", "command": json.loads(approved.to_json()), "decision": {}}
    decider = worker.taker(AGENT_LOGIN).decider

    def run_of(envelope: CommandEnvelope, **options) -> CommandRun:
        return CommandRun(envelope.to_json().encode(), envelope, worker.pipeline.plan(envelope), **options)

    try:
        unapproved = decider.decide(run_of(approved))[0]
        other = decider.decide(run_of(forged))[0]
        same = decider.decide(run_of(approved, approval=approval))[0]
        after = decider.decide(run_of(forged))[0]  # the id now names the command that ran
    finally:
        worker.conn.close()
        worker.audit.close()
    assert unapproved is not None and unapproved.status == "pending_approval", unapproved
    assert same is not None and same.status == "ok", same
    assert other is not None and other.status == "pending_approval", other
    assert after is not None and after.error == "id_reused", after
