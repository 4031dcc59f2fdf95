"""Each sending login's queue has its own processing lists; a router that dies holding commands of
several queues has each recovered, answered on its own login's replies, none run twice."""

from __future__ import annotations

import pytest

from protocol.commands import CommandEnvelope
from protocol.keys import AGENT_LOGIN, MCP_LOGIN
from router.mcp.origin import MCP_ORIGIN
from tests.router.router_helpers import (
    OWNER_TURN,
    RouterProcess,
    WorkerThread,
    login,
    note_lines,
    reply_on,
    router_env,
    send,
    settings_for,
    wait_until,
)

ORIGINS = {AGENT_LOGIN: OWNER_TURN, MCP_LOGIN: MCP_ORIGIN}


def note(sender: str, text: str, delay: float = 0) -> CommandEnvelope:
    params = {"text": text, "delay_seconds": delay} if delay else {"text": text}
    return CommandEnvelope.new("SLOW_NOTE" if delay else "NOTE", params, "t", ttl_seconds=120,
                               origin=ORIGINS[sender])


@pytest.mark.slow
def test_a_router_killed_mid_item_has_every_queues_list_taken_over(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    clients = {AGENT_LOGIN: login(redis_urls.agent_url), MCP_LOGIN: login(redis_urls.mcp_url)}
    first = RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id="r1"))
    second = None
    try:
        wait_until(lambda: admin.exists(keys.router_heartbeat("r1")), "router r1 to start")
        slow = {sender: note(sender, f"{sender}'s slow note", delay=20) for sender in clients}
        for sender, envelope in slow.items():
            send(clients[sender], keys, sender, envelope)
        wait_until(lambda: all(admin.exists(keys.idempotency(e.id)) for e in slow.values()), "both to start")
        first.process.kill()  # mid-item: each command is in r1's processing list of its queue
        first.wait()
        assert [admin.llen(keys.processing_of(sender, "r1")) for sender in clients] == [1, 1]
        second = RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id="r2"))
        replies = {sender: reply_on(clients[sender], keys, sender, envelope.id, timeout=90)
                   for sender, envelope in slow.items()}
        # Started and never finished: `unknown`, never run again, each on its own login's replies.
        assert {sender: (r["status"], r["error"]) for sender, r in replies.items()} == {
            sender: ("unknown", "interrupted") for sender in clients}, replies
        assert note_lines(tmp_path) == []
        assert [admin.llen(keys.processing_of(sender, r)) for sender in clients for r in ("r1", "r2")] == [0] * 4
    finally:
        for process in (first, second):
            if process is not None:
                process.stop()
        for conn in clients.values():
            conn.close()


def test_a_restarted_router_recovers_its_own_list_of_every_queue(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    left = {sender: note(sender, f"{sender}'s note left in hand") for sender in (AGENT_LOGIN, MCP_LOGIN)}
    for sender, envelope in left.items():
        admin.lpush(keys.processing_of(sender, "r1"), envelope.to_json())  # r1 died holding them
    mcp = login(redis_urls.mcp_url)
    try:
        with WorkerThread(settings_for(redis_urls.router_url, tmp_path)):
            assert reply_on(admin, keys, AGENT_LOGIN, left[AGENT_LOGIN].id)["status"] == "ok"
            assert reply_on(mcp, keys, MCP_LOGIN, left[MCP_LOGIN].id)["status"] == "ok"
            wait_until(lambda: not any(admin.llen(keys.processing_of(s, "r1")) for s in left), "both lists empty")
    finally:
        mcp.close()
    assert sorted(line["text"] for line in note_lines(tmp_path)) == sorted(e.params["text"] for e in left.values())
