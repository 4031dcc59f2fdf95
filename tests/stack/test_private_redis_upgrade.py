"""`./safeclaw`'s private Redis keeps its data across runs (AOF in .run/redis): the keys an
earlier SafeClaw wrote there under the names before the cluster hash tag are moved to today's
names when it starts, so a command queued before the upgrade is still taken and a done record
still answers a repeat. Its `upgrade` login may only find and rename SafeClaw's keys."""

from __future__ import annotations

import pytest
import redis

from protocol.keys import Keys
from scripts.stack_redis import PrivateRedis


@pytest.fixture
def private(tmp_path):
    server = PrivateRedis(tmp_path, Keys())
    server.admin_password = "test-admin-password"
    server.start()
    yield server
    assert server.process is not None
    server.process.terminate()
    server.process.wait(timeout=10)


def test_an_earlier_runs_queue_and_records_move_to_todays_names(private, capsys):
    keys = Keys()
    admin = redis.Redis.from_url(private.url("admin"), decode_responses=True)
    admin.lpush("safeclaw:command_queue", "queued before the upgrade")
    admin.set("safeclaw:router:idem:c1", "done record", ex=600)
    private.upgrade_key_names()
    assert admin.lrange(keys.command_queue, 0, -1) == ["queued before the upgrade"]
    assert admin.get(keys.idempotency("c1")) == "done record"
    assert admin.keys("safeclaw:*") == []
    assert "moved 2 key(s)" in capsys.readouterr().err
    admin.close()


def test_the_upgrade_login_can_only_rename_safeclaws_keys(private):
    admin = redis.Redis.from_url(private.url("admin"), decode_responses=True)
    admin.set("another:app", "x")
    upgrade = redis.Redis.from_url(private.url("upgrade"), decode_responses=True)
    for attempt in (lambda: upgrade.get("safeclaw:command_queue"), lambda: upgrade.renamenx("another:app", "y"),
                    lambda: upgrade.set("{safeclaw}:control:kill_switch", "off")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            attempt()
    assert admin.get("another:app") == "x"
    upgrade.close()
    admin.close()
