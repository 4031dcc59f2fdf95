"""Helpers for router tests: settings, in-process worker threads, real router subprocesses."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from protocol.commands import CommandEnvelope
from protocol.origin import OWNER, Origin
from router.app import build_worker
from router.config.settings import RouterSettings
from router.queue.worker import Worker
from router.registry import Skill, discover_skills
from router.skills.note.skill import SKILL as NOTE
from router.skills.ping.skill import SKILL as PING
from tests.support.router_test_skills import TEST_SKILLS

REPO_ROOT = Path(__file__).resolve().parents[2]
MY_SKILLS: dict[str, Skill] = {"PING": PING, "NOTE": NOTE, **TEST_SKILLS}
# The owner typing at the console, having read nothing from outside: what most tests send.
OWNER_TURN = Origin(OWNER, "console")


def router_env(router_url: str, data_dir: Path, router_id: str = "r1", **extra: str) -> dict[str, str]:
    env = {
        "REDIS_URL": router_url, "ROUTER_ID": router_id, "ROUTER_DATA_DIR": str(data_dir),
        "ROUTER_LOG_FILE": str(data_dir / f"{router_id}.log"),
        "ROUTER_HEARTBEAT_TTL": "3",
    }
    env.update(extra)
    return env


def settings_for(router_url: str, data_dir: Path, router_id: str = "r1", **extra: str) -> RouterSettings:
    return RouterSettings.from_env(router_env(router_url, data_dir, router_id, **extra))


class WorkerThread:
    """A Worker running in a thread of the test process; stop() joins it."""

    def __init__(self, settings: RouterSettings, skills: dict[str, Skill] | None = None,
                 credentials: dict[str, str] | None = None) -> None:
        self.worker = build_worker(settings, skills or MY_SKILLS, credentials or {})
        self.thread = threading.Thread(target=self.worker.run, daemon=True)

    def __enter__(self) -> Worker:
        self.thread.start()
        return self.worker

    def __exit__(self, *exc: object) -> None:
        self.worker.stop()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "worker did not stop"


@contextlib.contextmanager
def moltbook_router(redis_server, folder: Path, key: str, fake) -> Iterator[redis.Redis]:
    """One real router (a Worker against the real redis-server) with every skill, holding the
    Moltbook `key` and pointed at `fake`, on an emptied Redis: its admin client."""
    admin = redis_server.admin_client()
    admin.flushall()
    settings = settings_for(redis_server.router_url, folder, MOLTBOOK_API_BASE=fake.base)
    try:
        with WorkerThread(settings, discover_skills(), {"MOLTBOOK_API_KEY": key}):
            yield admin
    finally:
        admin.flushall()
        admin.close()


class RouterProcess:
    """`python router/start_router.py` as a real subprocess with its own env."""

    def __init__(self, env: dict[str, str], cwd: Path = REPO_ROOT, test_skills: bool = True) -> None:
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
        self.log_path = Path(env["ROUTER_DATA_DIR"]) / f"{env['ROUTER_ID']}.stderr"
        self._stderr = open(self.log_path, "ab")  # noqa: SIM115 - closed in wait()
        # With test skills: the real entry point, run by a launcher that adds SLOW_NOTE.
        command = ([sys.executable, "-m", "tests.support.router_test_skills"] if test_skills
                   else [sys.executable, str(REPO_ROOT / "router" / "start_router.py")])
        if test_skills:
            full_env["PYTHONPATH"] = str(REPO_ROOT)
        self.process = subprocess.Popen(
            [*command, "--env-file", "/nonexistent.env"],
            env=full_env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=self._stderr,
        )

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = 60) -> int:
        code = self.process.wait(timeout=timeout)
        self._stderr.close()
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.wait()


def wait_until(predicate, what: str, deadline_seconds: float = 60.0, interval: float = 0.05):
    deadline = time.monotonic() + deadline_seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(interval)


def push(admin: redis.Redis, keys, action: str, params: dict, ttl: float = 120,
         conversation: str = "t", origin: Origin | None = OWNER_TURN) -> str:
    envelope = CommandEnvelope.new(action, params, conversation, ttl_seconds=ttl, origin=origin)
    admin.lpush(keys.command_queue, envelope.to_json())
    return envelope.id


def reply_of(admin: redis.Redis, keys, command_id: str, timeout: float = 60) -> dict:
    # Short blocking pops: one long BLPOP would outlive the admin client's socket timeout
    # on a loaded machine and fail as a socket error rather than "no reply".
    deadline = time.monotonic() + timeout
    while True:
        wait = max(1, min(5, round(deadline - time.monotonic())))
        popped = admin.blpop([keys.response(command_id)], timeout=wait)
        if popped is not None:
            return json.loads(popped[1])
        assert time.monotonic() < deadline, f"no reply for {command_id}"


def login(url: str) -> redis.Redis:
    """A client as one of SafeClaw's Redis logins (its URL)."""
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=10)


def send(conn: redis.Redis, keys, sender: str, envelope: CommandEnvelope) -> None:
    """Queue a command on the `sender` login's own queue."""
    conn.lpush(keys.command_queue_of(sender), envelope.to_json())


def reply_on(conn: redis.Redis, keys, sender: str, command_id: str, timeout: float = 60) -> dict:
    """The reply to a command of the `sender` login, from that login's own replies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        popped = conn.blpop([keys.response_of(sender, command_id)], timeout=2)
        if popped is not None:
            return json.loads(popped[1])
    raise AssertionError(f"no reply for {command_id} on the {sender} login's replies")


def note_lines(data_dir: Path) -> list[dict]:
    path = data_dir / "notes.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]
