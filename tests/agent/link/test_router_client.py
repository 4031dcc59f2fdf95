"""RouterClient against a real redis-server and an in-process router worker."""

import json
import threading
import time

import pytest

from agent.link.redis_pool import redis_client
from agent.link.router_client import NoRouter, RouterClient
from protocol.keys import Keys
from tests.router.router_helpers import WorkerThread, settings_for
from tests.support.faulty_redis import FaultyRedis
from tests.support.redis_server import free_port


@pytest.fixture
def client(redis_urls):
    made = []

    def make(timeout=10.0, url=None):
        c = RouterClient(redis_client(url or redis_urls.agent_url), redis_urls.keys, timeout=timeout)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def test_call_round_trip_ok(redis_urls, client, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        observation = client().call("NOTE", {"text": "hi"}, "console")
    assert observation == {"status": "ok", "result": {"written": True, "file": "notes.jsonl"}, "outside_text": False}


def test_a_repeated_intent_is_answered_from_the_first_without_acting_twice(redis_urls, client, tmp_path):
    from protocol.commands import intent_key
    from tests.router.router_helpers import note_lines

    intent = intent_key("turn-a", "NOTE", {"text": "once"})
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        first = client().call("NOTE", {"text": "once"}, "console", intent)
        again = client().call("NOTE", {"text": "once"}, "console", intent)
    assert first["status"] == again["status"] == "ok" and again["result"] == first["result"]
    assert len(note_lines(tmp_path)) == 1


def test_denied_observation_carries_error_and_message(redis_urls, client, tmp_path):
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        observation = client().call("NUKE", {}, "console")
    assert observation["status"] == "denied" and observation["error"] == "unknown_command"
    assert "NUKE" in observation["message"]


def test_timeout_is_unknown_and_late_reply_not_applied_to_later_turn(redis_urls, admin, client, tmp_path):
    agent = client(timeout=0.3)
    first = agent.call("PING", {}, "console")  # no router yet
    assert first["status"] == "unknown" and "outcome unknown" in first["message"]
    assert "fail" not in first["message"]
    [queued] = admin.lrange(redis_urls.keys.command_queue, 0, -1)
    first_id = json.loads(queued)["id"]
    agent.timeout = 10.0
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        second = agent.call("PING", {}, "console")
        late = admin.blpop([redis_urls.keys.response(first_id)], timeout=10)
    assert second == {"status": "ok", "result": {"pong": True, "router_id": "r1"}, "outside_text": False}
    assert json.loads(late[1])["status"] == "expired"  # the first command expired; never run


def test_redis_unreachable_is_an_error_observation(redis_urls, client, caplog):
    url = f"redis://agent:pw@127.0.0.1:{free_port()}/0"
    agent = client(timeout=1.0, url=url)
    observation = agent.call("PING", {}, "console")
    again = agent.call("PING", {}, "console")
    assert observation["status"] == again["status"] == "error"
    assert observation["error"] == "router_unreachable"
    assert sum("Redis unreachable" in r.getMessage() for r in caplog.records) == 1
    assert agent.ping() is False


def test_ping_needs_a_fresh_router_heartbeat(redis_urls, admin, client, tmp_path):
    agent = client()
    assert agent.ping() is False
    admin.set(redis_urls.keys.router_heartbeat("old"), json.dumps({"ts": time.time() - 3600}))
    admin.set(redis_urls.keys.router_heartbeat("odd"), json.dumps({"ts": "yesterday"}))
    admin.set(redis_urls.keys.router_heartbeat("list"), json.dumps([1, 2]))
    assert agent.ping() is False
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        deadline = time.monotonic() + 30
        while not agent.ping():
            assert time.monotonic() < deadline, "no heartbeat seen"
            time.sleep(0.05)
        assert [r["router_id"] for r in agent.routers()] == ["r1"]


def test_no_router_says_how_to_connect():
    observation = NoRouter().call("PING", {}, "console")
    assert observation["status"] == "error" and observation["error"] == "router_not_connected"
    assert "REDIS_URL" in observation["message"]
    assert NoRouter().ping() is False


def test_redis_refusing_the_command_is_an_error_observation_not_a_crash(redis_urls):
    # The agent's ACL user may push only to the agreed queue: another name is refused (NOPERM).
    keys = Keys(command_queue="safeclaw:elsewhere")
    agent = RouterClient(redis_client(redis_urls.agent_url), keys, timeout=1.0)
    try:
        observation = agent.call("PING", {}, "console")
    finally:
        agent.close()
    assert observation["status"] == "error" and observation["error"] == "redis_refused"
    assert "not sent" in observation["message"] and "permission" in observation["message"]
    assert redis_urls.server.agent_password not in observation["message"]


def test_redis_refusing_the_reply_read_is_unknown_not_a_crash(redis_urls, admin):
    # Sent, but the reply key is outside what the agent may read: the outcome is unknown.
    keys = Keys(response_prefix="safeclaw:elsewhere:")
    agent = RouterClient(redis_client(redis_urls.agent_url), keys, timeout=1.0)
    try:
        observation = agent.call("PING", {}, "console")
    finally:
        agent.close()
    assert observation["status"] == "unknown" and "permission" in observation["message"]
    assert admin.llen(redis_urls.keys.command_queue) == 1


def test_a_push_whose_answer_is_lost_is_not_said_not_sent(redis_urls, admin):
    """The LPUSH reached Redis and took effect, and the connection broke before its answer (a
    primary killed right after a write, a network that cut then): every try is lost the same way.
    The command is queued, so a router may run it: the agent must not say `not sent` (the owner, or
    the model, would send it again), it waits for the reply and says `unknown` when none comes."""
    faulty = FaultyRedis(redis_urls.server.port, chance=1.0, kinds=("reset",), only=frozenset({b"LPUSH"})).start()
    faulty.on = True
    agent = RouterClient(redis_client(faulty.url("agent", redis_urls.server.agent_password)), redis_urls.keys,
                         timeout=2.0)
    try:
        observation = agent.call("PING", {}, "console")
    finally:
        agent.close()
        faulty.stop()
    assert admin.llen(redis_urls.keys.command_queue) >= 1  # it was queued (each try, the same id)
    queued = {json.loads(item)["id"] for item in admin.lrange(redis_urls.keys.command_queue, 0, -1)}
    assert len(queued) == 1
    assert observation["status"] == "unknown", observation
    assert "not sent" not in observation["message"]


def test_a_push_that_never_left_is_not_sent(redis_urls):
    """Nothing listens: no try reached Redis, so `not sent` is the truth (and a retry is safe)."""
    agent = RouterClient(redis_client(f"redis://agent:pw@127.0.0.1:{free_port()}/0"), redis_urls.keys,
                         timeout=5.0)
    try:
        started = time.monotonic()
        observation = agent.call("PING", {}, "console")
    finally:
        agent.close()
    assert observation["error"] == "router_unreachable" and "not sent" in observation["message"]
    assert time.monotonic() - started < 3  # answered at once, not after the reply's timeout


def test_a_push_whose_answer_was_lost_is_pushed_again_once_redis_answers_and_its_reply_comes(redis_urls, admin,
                                                                                              tmp_path):
    """Every try's answer lost, and the tries themselves lost too (they reached a primary that died
    before its replica had them: here, the queue emptied by hand). Redis answers again while the
    agent still waits: the same envelope is pushed again (a router runs one id once), so the caller
    gets the command's real reply, not `unknown` at its deadline."""
    faulty = FaultyRedis(redis_urls.server.port, chance=1.0, kinds=("reset",), only=frozenset({b"LPUSH"})).start()
    faulty.on = True
    agent = RouterClient(redis_client(faulty.url("agent", redis_urls.server.agent_password)), redis_urls.keys,
                         timeout=20.0)
    answers: list[dict] = []
    try:
        caller = threading.Thread(target=lambda: answers.append(agent.call("PING", {}, "console")))
        caller.start()
        deadline = time.monotonic() + 10
        while faulty.faults["reset"] < 3 and time.monotonic() < deadline:  # every try's answer lost
            time.sleep(0.05)
        admin.delete(redis_urls.keys.command_queue)  # and the tries with the primary that held them
        faulty.on = False
        with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
            caller.join(30)
    finally:
        agent.close()
        faulty.stop()
    assert answers and answers[0]["status"] == "ok", answers
