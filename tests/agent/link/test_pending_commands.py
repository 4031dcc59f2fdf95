"""Commands in flight are recorded before sending and answered after: RouterClient with its outbox
against a real redis-server and an in-process router worker."""

from __future__ import annotations

import asyncio
import errno
import json
import os

import pytest

from agent.errors import NotSavedError
from agent.link.pending_commands import PendingCommands, ReplyCollector, outcome, process_start
from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from agent.workspace import pending_writes
from protocol.replies import Reply, Status
from tests.router.router_helpers import WorkerThread, settings_for


@pytest.fixture
def outbox(workspace):
    return PendingCommands(workspace)


@pytest.fixture
def client(redis_urls, outbox):
    made = RouterClient(redis_client(redis_urls.agent_url), redis_urls.keys, timeout=1.0, outbox=outbox)
    yield made
    made.close()


def test_the_command_is_on_disk_before_it_is_pushed_and_gone_once_answered(
    redis_urls, client, outbox, tmp_path
):
    seen_at_push = []
    real_lpush = client.conn.lpush

    def lpush(queue, raw):
        command_id = json.loads(raw)["id"]
        on_disk = json.loads(outbox.path.read_text())
        seen_at_push.append(on_disk[command_id]["action"])
        return real_lpush(queue, raw)

    client.conn.lpush = lpush
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
        observation = client.call("NOTE", {"text": "hi"}, "telegram:7")
    assert observation["status"] == "ok"
    assert seen_at_push == ["NOTE"]
    assert outbox.entries() == {}


def test_a_command_that_cannot_be_recorded_is_not_sent(redis_urls, client, monkeypatch):
    def full(path, data, durable=True):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pending_writes, "write_json_atomic", full)
    observation = client.call("NOTE", {"text": "hi"}, "console")
    assert observation["status"] == "error" and observation["error"] == "not_recorded"
    assert "the disk is full" in observation["message"]
    admin = redis_urls.admin_client()
    assert admin.llen(redis_urls.keys.command_queue) == 0
    admin.close()


def test_a_command_not_recorded_is_rolled_back_and_never_reported_unknown_later(
    redis_urls, client, outbox, monkeypatch
):
    """Issue 19, item 3: the owner was told "not sent", then later "outcome unknown (check the
    platform)" for the same command, which was never sent: the unsaved record stayed in memory."""

    def full(path, data, durable=True):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pending_writes, "write_json_atomic", full)
    assert client.call("CREATE_POST", {"platform": "bsky", "text": "hi"}, "console")["error"] == "not_recorded"
    assert outbox.entries() == {}
    monkeypatch.undo()
    outbox.workspace.pending.flush()
    assert outbox.entries() == {}
    told = []

    async def tell(conversation, text):
        told.append((conversation, text))

    asyncio.run(ReplyCollector(outbox, client, tell).collect_once())
    assert told == []


def test_a_late_reply_is_told_to_the_owner_in_the_conversation_that_asked(redis_urls, client, outbox):
    told = []

    async def tell(conversation, text):
        told.append((conversation, text))

    collector = ReplyCollector(outbox, client, tell)  # the agent runs: nothing was out at its start
    observation = client.call("CREATE_POST", {"platform": "bsky", "text": "hi"}, "telegram:42")
    assert observation["status"] == "unknown"  # no router: the call gives up, the record stays
    [command_id] = outbox.entries()
    assert asyncio.run(collector.collect_once()) == 0  # nothing yet: keep waiting
    admin = redis_urls.admin_client()
    reply = Reply(command_id, Status.OK, "posted", result={"url": "https://bsky.app/profile/x/post/3k"})
    admin.rpush(redis_urls.keys.response(command_id), reply.to_json())
    admin.close()
    assert asyncio.run(collector.collect_once()) == 1
    assert told == [
        ("telegram:42", "The post you asked for earlier: sent, https://bsky.app/profile/x/post/3k.")
    ]
    assert outbox.entries() == {}


def test_outcome_lines():
    entry = {"action": "CREATE_POST"}
    assert outcome(entry, {"status": "ok", "result": {"uri": "at://x"}}, True) == (
        "The post you asked for before the restart: sent, at://x."
    )
    assert outcome(entry, None, True).endswith(
        "no answer from the router in time; outcome unknown (check the platform)."
    )
    assert outcome({"action": "LIKE"}, {"status": "denied", "message": "kill switch"}, False) == (
        "The like you asked for earlier: denied (kill switch)."
    )


def test_a_command_another_live_agent_process_waits_on_is_left_to_it(redis_urls, client, outbox):
    import subprocess
    import sys

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        client.call("CREATE_POST", {"platform": "bsky", "text": "theirs"}, "console")
        [(command_id, entry)] = outbox.entries().items()
        # as `autonomy once` would have sent it
        data = {command_id: {**entry, "pid": other.pid, "pid_started": process_start(other.pid)}}
        outbox.workspace.pending.write(outbox.path, data)
        admin = redis_urls.admin_client()
        reply = Reply(command_id, Status.OK, "posted", result={"url": "https://x.test/1"})
        admin.rpush(redis_urls.keys.response(command_id), reply.to_json())
        told = []

        async def tell(conversation, text):
            told.append(text)

        collector = ReplyCollector(outbox, client, tell)
        assert asyncio.run(collector.collect_once()) == 0 and told == []
        assert admin.llen(redis_urls.keys.response(command_id)) == 1  # still there for its sender
    finally:
        other.kill()
        other.wait()
    assert asyncio.run(collector.collect_once()) == 1  # its sender is gone: the reply is told here
    assert told == ["The post you asked for before the restart: sent, https://x.test/1."]
    admin.close()


def test_a_full_disk_while_collecting_never_loses_the_outcome(redis_urls, client, outbox, monkeypatch):
    """The reply is taken from Redis once: the owner is told even if the record cannot be updated."""
    client.call("CREATE_POST", {"platform": "bsky", "text": "one"}, "telegram:1")
    client.call("CREATE_POST", {"platform": "bsky", "text": "two"}, "telegram:2")
    first, second = outbox.entries()
    admin = redis_urls.admin_client()
    for command_id, url in ((first, "https://x.test/1"), (second, "https://x.test/2")):
        reply = Reply(command_id, Status.OK, "posted", result={"url": url})
        admin.rpush(redis_urls.keys.response(command_id), reply.to_json())
    admin.close()
    told = []

    async def tell(conversation, text):
        told.append((conversation, text))

    collector = ReplyCollector(outbox, client, tell)

    def full(path, data, durable=True):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pending_writes, "write_json_atomic", full)
    assert asyncio.run(collector.collect_once()) == 2
    assert sorted(told) == [
        ("telegram:1", "The post you asked for before the restart: sent, https://x.test/1."),
        ("telegram:2", "The post you asked for before the restart: sent, https://x.test/2."),
    ]
    assert asyncio.run(collector.collect_once()) == 0  # told once, even before the record is written
    monkeypatch.undo()
    outbox.workspace.pending.flush()
    assert outbox.entries() == {}


def test_an_outcome_the_owner_could_not_be_told_is_told_at_the_next_pass(redis_urls, client, outbox):
    client.call("CREATE_POST", {"platform": "bsky", "text": "one"}, "telegram:1")
    [command_id] = outbox.entries()
    admin = redis_urls.admin_client()
    admin.rpush(
        redis_urls.keys.response(command_id),
        Reply(command_id, Status.OK, "posted", result={"url": "https://x.test/1"}).to_json(),
    )
    admin.close()
    told = []
    fail = [True]

    async def tell(conversation, text):
        if fail.pop(0) if fail else False:
            raise RuntimeError("the channel is down")
        told.append(text)

    collector = ReplyCollector(outbox, client, tell)
    assert asyncio.run(collector.collect_once()) == 0  # logged; the reply, taken from Redis, is kept
    assert asyncio.run(collector.collect_once()) == 1
    assert told == ["The post you asked for before the restart: sent, https://x.test/1."]


def test_a_live_process_that_only_reuses_the_senders_pid_does_not_hold_the_reply(redis_urls, client, outbox):
    import subprocess
    import sys

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        client.call("CREATE_POST", {"platform": "bsky", "text": "mine"}, "console")
        [(command_id, entry)] = outbox.entries().items()
        # The sender died before the restart; an unrelated process got its pid since.
        data = {command_id: {**entry, "pid": other.pid, "pid_started": entry["pid_started"] - 1}}
        outbox.workspace.pending.write(outbox.path, data)
        admin = redis_urls.admin_client()
        reply = Reply(command_id, Status.OK, "posted", result={"url": "https://x.test/1"})
        admin.rpush(redis_urls.keys.response(command_id), reply.to_json())
        admin.close()
        told = []

        async def tell(conversation, text):
            told.append(text)

        assert asyncio.run(ReplyCollector(outbox, client, tell).collect_once()) == 1
    finally:
        other.kill()
        other.wait()
    assert told == ["The post you asked for before the restart: sent, https://x.test/1."]


def test_the_last_answered_command_is_forgotten_by_deleting_the_file(outbox, monkeypatch):
    from protocol.commands import CommandEnvelope

    first, second = (CommandEnvelope.new("LIKE", {"uri": f"at://x/{n}"}, "console", ttl_seconds=60) for n in (1, 2))
    outbox.add(first)
    outbox.add(second)
    outbox.remove(first.id)
    assert list(json.loads(outbox.path.read_text())) == [second.id]  # one left: the file rewritten
    outbox.remove(second.id)
    assert not outbox.path.exists() and outbox.entries() == {}
    outbox.add(first)
    assert list(json.loads(outbox.path.read_text())) == [first.id]

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pending_writes, "write_json_atomic", full)
    with pytest.raises(NotSavedError):
        outbox.add(second)  # kept in memory, waiting for the disk
    outbox.remove(second.id)
    outbox.remove(first.id)
    assert outbox.entries() == {} and not outbox.workspace.pending.has(outbox.path)
    assert not outbox.path.exists()  # nothing in flight, on disk or waiting to be written
