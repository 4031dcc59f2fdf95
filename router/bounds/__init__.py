"""Hard bounds the router enforces on effects whatever the mind does (issue 10).

- `quotas`: at most N effects of one kind per platform per UTC day (INCR, shared by routers);
- `pacing`: a platform's minimum gap between two effects of one kind (Moltbook's built in);
- `duplicates`: no text at least 90% similar to one sent on that platform in the last 7 days;
- `circuit`: after N failed writes in a row on a platform, its writes stop for a while.

They decide on an effect's platform and kind (and text), never on an action name. Each stages
single Redis commands (no MULTI: see `router.queue.worker` on AOF replay) on a pipeline, or on the
worker's claim of the command (`router.queue.claim_step`: the claim and the bounds, one script),
takes `now` from the caller so tests run on an injected clock, and answers a refusal as a
`Denial`. Their counters live in Redis, or, for a router without one (the one-shot tool), in
`embedded.EmbeddedStore`: a SQLite file answering the same commands, shared by every process on
the machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

import redis

from router.bounds.embedded import EmbeddedStore

Counters: TypeAlias = "redis.Redis | EmbeddedStore"  # where the bounds count
T = TypeVar("T")


class EffectLike(Protocol):
    """What the bounds read of an effect (`router.policy.effects.Effect` has these)."""

    @property
    def platform(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str | None: ...

    @property
    def all_text(self) -> str: ...


@dataclass(frozen=True)
class Staged(Generic[T]):
    """A bound's commands queued on a shared pipeline (`count` of them) and how to read their
    answers: `settle(conn, answers)` is what the bound's `take` returns, so `HardBounds` checks all
    four bounds in one round trip."""

    count: int
    settle: Callable[[Counters, list[Any]], T | Denial | None]

    def take(self, conn: Counters, pipe: Any) -> T | Denial | None:
        """Run the queued commands alone and settle them (a bound's own `take`)."""
        return self.settle(conn, pipe.execute())


@dataclass(frozen=True)
class Denial:
    """Why a bound refuses an effect: a machine-readable reason, a line for people, when to retry."""

    reason: str  # quota_exceeded, paced, duplicate_content, circuit_open
    message: str
    retry_after: int | None = None  # whole seconds, at least 1


def seconds_until(moment: float, now: float) -> int:
    """Whole seconds from now until moment, at least 1 (a retry_after)."""
    return max(1, math.ceil(moment - now))


def as_text(value: bytes | str) -> str:
    """A Redis value as text, whichever way the connection decodes (the worker's hands back bytes)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
