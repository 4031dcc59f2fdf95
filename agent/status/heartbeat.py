"""The agent's own heartbeat: `Keys.agent_heartbeat` holds what the running agent is (pid, LLM,
channels, its last LLM call's health) while it runs; `status`, `doctor` and the dashboard read it."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import redis

from agent.config.settings import AgentSettings
from agent.link.redis_pool import SOCKET_TIMEOUT
from protocol.keys import Keys

HEARTBEAT_TTL = 15  # seconds


class AgentHeartbeat:
    """Keeps `Keys.agent_heartbeat` set (JSON, with a TTL) while the agent runs; a no-op without Redis."""
    def __init__(
        self, conn: redis.Redis | None, keys: Keys, info: Mapping[str, Any], ttl: int = HEARTBEAT_TTL,
        llm: Any = None,
    ) -> None:
        self.llm = llm  # its `health` ({ok, error, ts} of the last call) goes into each beat
        self.conn = conn  # the process's one pool
        self.key = keys.agent_heartbeat
        self.info = dict(info)
        self.ttl = ttl
        self.started_at = time.time()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(
        cls, settings: AgentSettings, conn: redis.Redis | None, channels: list[str], llm: Any = None
    ) -> AgentHeartbeat:
        """The provider and model are those of the LLM running, which may not be the configured
        ones (./safeclaw uses the embedded model when the configured Ollama does not answer)."""
        info = {"llm_provider": getattr(llm, "name", None) or settings.llm.provider,
                "llm_model": getattr(llm, "model", None) or settings.llm.model, "channels": channels}
        return cls(conn, settings.keys, info, llm=llm)

    def value(self) -> str:
        health = getattr(self.llm, "health", None)
        extra = {"llm": health} if isinstance(health, dict) else {}
        return json.dumps({"pid": os.getpid(), "started_at": self.started_at, "ts": time.time(),
                           "ttl": self.ttl, **self.info, **extra})

    def beat(self, conn: redis.Redis) -> bool:
        try:
            conn.set(self.key, self.value(), ex=self.ttl)
            return True
        except redis.RedisError:
            return False  # Redis down: the router client says so in the log; try again next period

    def _run(self, conn: redis.Redis) -> None:
        while not self._stop.is_set():
            self.beat(conn)
            self._stop.wait(self.ttl / 3)
        with contextlib.suppress(redis.RedisError):  # else it expires on its own
            conn.delete(self.key)

    def start(self) -> None:
        if self.conn is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(self.conn,), name="agent-heartbeat",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=SOCKET_TIMEOUT * 2)
            self._thread = None

    def __enter__(self) -> AgentHeartbeat:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
