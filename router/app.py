"""The router's wiring: one Redis connection pool for the process, shared by the loop, its lanes,
the heartbeat and the approvals, and the worker built on it with the settings, credentials and
redactor its entry point read once (`router/start_router.py`; tests and tools build the same way)."""

from __future__ import annotations

from collections.abc import Mapping

from router.config.credentials import secret_values
from router.config.settings import RouterSettings
from router.queue.redis_guard import refuse_at_start
from router.queue.redis_io import connect
from router.queue.worker import Worker
from router.redaction import Redactor
from router.registry import Skill


def build_worker(
    settings: RouterSettings,
    skills: Mapping[str, Skill],
    credentials: Mapping[str, str],
    redactor: Redactor | None = None,
) -> Worker:
    """The worker on the process's one Redis pool (closed when the worker stops)."""
    redactor = redactor or Redactor(secret_values(settings.env, credentials))
    conn = connect(settings)
    refuse_at_start(conn, settings)  # a Redis that may drop keys, or a replica: why, and how to fix it
    return Worker(settings, skills, credentials, redactor, conn)
