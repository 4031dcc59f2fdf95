"""Redis that answers but refuses (out of memory, a read-only replica, a replica whose master is
down, a failed save) is "Redis unavailable" to the router: it backs off, logs one line naming the
cause, keeps its heartbeat thread, never exits, and works again when Redis does. The faults are
real: a redis-server of this module's own, reconfigured by its admin."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from tests.router.router_helpers import (
    RouterProcess,
    WorkerThread,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)
from tests.support.redis_server import RedisServer, free_port


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer(persistent=False)
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def server(own_redis: RedisServer) -> Iterator[RedisServer]:
    admin = own_redis.admin_client()
    admin.flushall()
    admin.close()
    yield own_redis
    admin = own_redis.admin_client()
    undo_all(admin, own_redis.dir)
    admin.flushall()
    admin.close()


def undo_all(admin: redis.Redis, folder: Path) -> None:
    admin.config_set("maxmemory", 0)
    admin.execute_command("REPLICAOF", "NO", "ONE")
    admin.config_set("replica-serve-stale-data", "yes")
    blocker = folder / "dump.rdb"
    if blocker.is_dir():
        (blocker / "keep").unlink(missing_ok=True)
        blocker.rmdir()
        admin.bgsave()
        wait_until(lambda: admin.info("persistence")["rdb_bgsave_in_progress"] == 0, "the save", 20)
        wait_until(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "ok", "a good save", 20)
    admin.config_set("save", "")


def out_of_memory(admin: redis.Redis, folder: Path) -> None:
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", 1)


def read_only_replica(admin: redis.Redis, folder: Path) -> None:
    admin.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))  # a master that never answers


def master_down(admin: redis.Redis, folder: Path) -> None:
    admin.config_set("replica-serve-stale-data", "no")
    read_only_replica(admin, folder)


def failed_save(admin: redis.Redis, folder: Path) -> None:
    """A snapshot that cannot be written (a folder where the file goes): Redis answers MISCONF."""
    admin.config_set("save", "3600 1")
    (folder / "dump.rdb").mkdir()
    (folder / "dump.rdb" / "keep").write_text("x")
    admin.bgsave()
    wait_until(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "err", "the failed save", 20)


FAULTS: dict[str, tuple[Callable[[redis.Redis, Path], None], str]] = {
    "oom": (out_of_memory, "out of memory"),
    "readonly": (read_only_replica, "replica"),
    "masterdown": (master_down, "replica"),
    "misconf": (failed_save, "persist"),
}


def keys_of(server: RedisServer):  # type: ignore[no-untyped-def]
    return server.keys


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_redis_refusing_writes_is_unavailable_never_an_exit(server, tmp_path, caplog, fault):
    apply, cause = FAULTS[fault]
    keys = keys_of(server)
    admin = server.admin_client()
    caplog.set_level(logging.INFO, logger="safeclaw.router")
    try:
        with WorkerThread(settings_for(server.router_url, tmp_path)) as worker:
            assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=20)["status"] == "ok"
            loop = next(t for t in threading.enumerate() if t.name == "router-heartbeat")
            apply(admin, server.dir)
            wait_until(lambda: "Redis unavailable" in caplog.text, "the router to notice", 20)
            time.sleep(2)  # several tries of the loop, the lanes and the heartbeat against the refusal
            assert not worker.stop_event.is_set() and loop.is_alive()
            undo_all(admin, server.dir)
            reply = reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=20)
            assert reply["status"] == "ok"
            admin.delete(keys.router_heartbeat("r1"))
            wait_until(lambda: admin.exists(keys.router_heartbeat("r1")), "the heartbeat thread to beat", 20)
    finally:
        admin.close()
    lines = [r.getMessage() for r in caplog.records if "Redis unavailable" in r.getMessage()]
    assert len(lines) == 1, lines
    assert cause in lines[0].lower(), lines[0]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


@pytest.mark.slow
def test_a_router_process_outlives_out_of_memory_and_a_restart_under_it(server, tmp_path):
    keys = keys_of(server)
    admin = server.admin_client()
    router = RouterProcess(router_env(server.router_url, tmp_path))
    try:
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        out_of_memory(admin, server.dir)
        time.sleep(3)
        assert router.process.poll() is None, router.log_path.read_text()
        router.stop()
        assert router.process.returncode == 0, router.log_path.read_text()
        router = RouterProcess(router_env(server.router_url, tmp_path))  # a restart while Redis refuses
        time.sleep(3)
        assert router.process.poll() is None, router.log_path.read_text()
        undo_all(admin, server.dir)
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        router.signal(signal.SIGTERM)
        assert router.wait(30) == 0
    finally:
        router.stop() if router.process.poll() is None else None
        admin.close()
