"""Queue garbage pushed with the agent's own login, beyond what is not UTF-8 or not JSON: valid JSON
with the wrong type in every field, forged ids and versions, a flood of it. Nothing runs, the
sender of a readable id gets an answer, the dead-letter list stays within its cap, and the
router goes on answering."""

import json

import pytest
import redis

from tests.router.router_helpers import WorkerThread, note_lines, push, reply_of, settings_for, wait_until

GOOD = {
    "id": "g1",
    "action": "NOTE",
    "params": {"text": "x"},
    "conversation": "t",
    "created_at": 1.0,
    "expires_at": 9e9,
}
WRONG = [
    {"params": ["text", "x"]},
    {"params": None},
    {"params": "text=x"},
    {"action": 5},
    {"action": ["NOTE"]},
    {"action": None},
    {"expires_at": "9999999999"},
    {"expires_at": True},
    {"expires_at": None},
    {"created_at": "now"},
    {"v": "1"},
    {"v": 1.5},
    {"v": True},
    {"v": 2},
    {"intent": 5},
    {"intent": "a b"},
    {"conversation": {}},
    {"conversation": "t\n"},
    {"conversation": "t\ud800"},  # half a character: no Redis key, file or log line can hold it
    {"conversation": "\udfff"},
    {"action": "NOTE\udc00"},
    {"id": 5},
    {"id": "a:b"},
    {"id": "*"},
    {"id": ""},
]


@pytest.fixture
def agent(redis_urls):
    client = redis.Redis.from_url(redis_urls.agent_url)
    yield client
    client.close()


def test_valid_json_with_wrong_types_runs_nothing_and_every_readable_id_is_answered(
    redis_urls, admin, agent, tmp_path
):
    keys = redis_urls.keys
    items = [
        {**GOOD, "id": f"w{i}", **wrong} if "id" not in wrong else {**GOOD, **wrong}
        for i, wrong in enumerate(WRONG)
    ]
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        for item in items:
            agent.lpush(keys.command_queue, json.dumps(item))
        ping = reply_of(admin, keys, push(admin, keys, "PING", {}))
        wait_until(lambda: admin.llen(keys.dead_letter) == len(items), "every item dead-lettered")
        answered = [
            reply_of(admin, keys, item["id"], timeout=10)
            for item in items
            if isinstance(item["id"], str) and item["id"].startswith("w")
        ]
    assert ping["status"] == "ok"
    assert note_lines(tmp_path) == []
    assert all(reply["status"] == "error" for reply in answered), answered
    assert admin.llen(keys.processing("r1")) == 0


@pytest.mark.slow
def test_a_flood_of_garbage_keeps_the_dead_letter_list_within_its_cap(redis_urls, admin, agent, tmp_path):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_DEAD_LETTER_MAX="20")
    with WorkerThread(settings):
        pipe = agent.pipeline(transaction=False)
        for i in range(1500):
            pipe.lpush(keys.command_queue, [b"\xff", b"{", json.dumps({**GOOD, "params": [i]})][i % 3])
        pipe.execute()
        wait_until(lambda: admin.llen(keys.command_queue) == 0, "the flood drained", deadline_seconds=120)
        ping = reply_of(admin, keys, push(admin, keys, "PING", {}))
    assert ping["status"] == "ok"
    assert admin.llen(keys.dead_letter) <= 20
    assert note_lines(tmp_path) == []
