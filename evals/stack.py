"""The reads of an eval run go the production way: the agent's RouterClient → a private
redis-server with SafeClaw's ACL users → a router Worker holding only the public read skills
(FETCH_POST, SEARCH_POSTS) and no credential → an AppView (the fake one offline, the real one
with --live). This tool wires both sides, as `./safeclaw` does; it lives outside the agent, which
never imports the router."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from types import TracebackType

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from protocol.keys import Keys
from router.app import build_worker
from router.config.settings import RouterSettings
from router.queue.worker import Worker
from router.registry import discover_skills
from scripts.stack_redis import PrivateRedis

READ_SKILLS = ("FETCH_POST", "SEARCH_POSTS")
ROUTER_TIMEOUT = 30.0


class EvalStack:
    def __init__(self, run_dir: Path, appview_url: str | None) -> None:
        self.run_dir = run_dir
        self.appview_url = appview_url  # None: the router's default, the real public AppView
        self.keys = Keys()
        self.router: RouterClient | None = None
        self._redis: PrivateRedis | None = None
        self._worker: Worker | None = None
        self._thread: threading.Thread | None = None

    @property
    def agent_redis_url(self) -> str:
        """The agent user's REDIS_URL of the running stack (for an agent in another process)."""
        if self._redis is None:
            raise RuntimeError("the eval stack is not running")
        return str(self._redis.url("agent"))

    def __enter__(self) -> RouterClient:
        self._redis = redis = PrivateRedis(self.run_dir, self.keys)
        redis.start()
        env = {
            "REDIS_URL": redis.url("router"),
            "ROUTER_ID": "eval",
            "ROUTER_DATA_DIR": str(self.run_dir),
            "ROUTER_LOG_FILE": str(self.run_dir / "router.log"),
        }
        if self.appview_url:
            env["BSKY_APPVIEW"] = self.appview_url
        skills = {name: skill for name, skill in discover_skills().items() if name in READ_SKILLS}
        self._worker = worker = build_worker(RouterSettings.from_env(env), skills, {})
        self._thread = threading.Thread(target=worker.run, name="eval-router", daemon=True)
        self._thread.start()
        self.router = RouterClient(redis_client(redis.url("agent")), self.keys, ROUTER_TIMEOUT)
        return self.router

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.router is not None:
            self.router.close()
        if self._worker is not None:
            self._worker.stop()
        if self._thread is not None:
            self._thread.join(timeout=15)
        process = self._redis.process if self._redis is not None else None
        if process is not None:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(Exception):
                process.wait(timeout=10)
