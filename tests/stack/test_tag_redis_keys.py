"""An upgrade keeps what Redis holds: the keys named before the hash tag, renamed by
scripts/tag_redis_keys.py on a real redis-server, are where the new code looks, with their values
and TTLs, and a key already under its new name is never overwritten."""

from __future__ import annotations

from protocol.keys import MCP_LOGIN, Keys
from scripts.tag_redis_keys import tag_keys, tagged_name


def test_old_names_map_onto_every_tagged_name():
    keys = Keys()
    assert tagged_name("safeclaw:command_queue") == keys.command_queue
    assert tagged_name("safeclaw:response:c1") == keys.response("c1")
    assert tagged_name("safeclaw:login:{mcp}:command_queue") == keys.command_queue_of(MCP_LOGIN)
    assert tagged_name("safeclaw:login:mcp:response:c1") == keys.response_of(MCP_LOGIN, "c1")
    assert tagged_name("safeclaw:router:{mcp}:processing:r1") == keys.processing_of(MCP_LOGIN, "r1")
    assert tagged_name("safeclaw:router:idem:c1") == keys.idempotency("c1")
    assert tagged_name("safeclaw:approval:pending") == keys.approvals_pending
    assert tagged_name("other:key") is None and tagged_name(keys.command_queue) is None


def test_a_queued_command_and_its_records_survive_the_rename(admin):
    keys = Keys()
    admin.lpush("safeclaw:command_queue", "queued command")
    admin.set("safeclaw:router:idem:c1", "done record", ex=600)
    admin.lpush("safeclaw:login:{mcp}:command_queue", "mcp command")
    admin.set(keys.kill_switch, "already new")
    admin.set("safeclaw:control:kill_switch", "old")
    admin.set("unrelated", "x")
    renamed, taken = tag_keys(admin)
    assert sorted(renamed) == sorted(["safeclaw:command_queue", "safeclaw:router:idem:c1",
                                      "safeclaw:login:{mcp}:command_queue"])
    assert taken == ["safeclaw:control:kill_switch"]
    assert admin.lrange(keys.command_queue, 0, -1) == ["queued command"]
    assert admin.lrange(keys.command_queue_of(MCP_LOGIN), 0, -1) == ["mcp command"]
    assert admin.get(keys.idempotency("c1")) == "done record"
    assert 0 < admin.ttl(keys.idempotency("c1")) <= 600
    assert admin.get(keys.kill_switch) == "already new" and admin.get("safeclaw:control:kill_switch") == "old"
    assert admin.get("unrelated") == "x"
