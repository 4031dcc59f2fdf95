"""Helpers for the bounds' tests: an effect, a router-user connection, a settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis

from protocol.keys import Keys
from router.bounds.settings import BoundsSettings

PREFIX = Keys().router_prefix
NOTICES = Keys().owner_notices
# A Saturday noon, UTC: far enough from midnight that a test's few hours stay in one day.
NOON = 1_795_867_200.0


@dataclass(frozen=True)
class FakeEffect:
    platform: str
    kind: str
    text: str | None = None
    target: str | None = None

    @property
    def all_text(self) -> str:
        return self.text or ""


def settings(**env: str) -> BoundsSettings:
    return BoundsSettings.from_env(env)


@contextmanager
def router_conn(url: str) -> Iterator[redis.Redis]:
    """A connection as the router user (so the ACL is tested too), handing back bytes as the worker's does."""
    conn = redis.Redis.from_url(url, decode_responses=False)
    try:
        yield conn
    finally:
        conn.close()
