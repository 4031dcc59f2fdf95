"""What a policy check answers (`Decision`), the shapes of a check and of the hold, and what a caller
read ahead for a command in its own round trip (`Ahead`): shared by the policy, the approval flow,
the pipeline and the queue's triage."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis

from protocol.commands import CommandEnvelope
from protocol.hold_reasons import HoldReason
from protocol.replies import Status
from router.bounds import Denial, Staged
from router.bounds.guard import Held
from router.policy.effects import Effect, Scope


@dataclass(frozen=True)
class Decision:
    """A refusal: the reply status and the line the user sees."""

    status: Status
    error: str
    message: str
    retry_after: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # more reply fields, e.g. approval_id


# conn is None where no Redis is at hand (the one-shot tool without REDIS_URL): counters then go
# to `Policy.embedded`; a check that needs Redis itself must refuse rather than let it through.
Check = Callable[[Effect, CommandEnvelope, "redis.Redis | None", float], "Decision | None"]
# Hold: keep a command for the owner's approval, saying why (stored, the owner told), or refuse it.
Hold = Callable[[Effect, CommandEnvelope, HoldReason, float], "Decision"]


class Gate(Protocol):
    """A caller's claim of the command, deciding whether the counted checks take anything
    (`router.queue.claim_step`): the rate limits' and bounds' commands are staged into
    `commands()` and run in the claim's own atomic step, only when it is won; settled, their
    answers, or None when another copy holds the claim and nothing was taken."""

    taken: bool

    def commands(self) -> Any: ...

    def stage(self, pipe: Any, gated: Any = None) -> Staged[list[Any] | None]: ...


@dataclass(frozen=True)
class Ahead:
    """What the caller knows of this command before the checks: the live kill switch's raw value
    read in its own round trip (`queue_kill_switch`), its claim, to take with the counted checks
    as one step, and whether the run is the owner's approval of this very command (`approved`: it
    is not held again; every other check still applies)."""

    kill_switch: bytes | str | None = None
    switch_read: bool = False  # False: the policy reads the switch itself
    gate: Gate | None = None
    bounds: Held | Denial | None = None  # the bounds' answer in the caller's round trip (`stage_bounds`)
    bounds_taken: bool = False
    approved: bool = False


@dataclass(frozen=True)
class RateRule:
    name: str  # the setting's item, e.g. "MOLTBOOK_COMMENT" or "*:post"; names the counter
    scopes: frozenset[Scope]
    limit: int
    window_seconds: int
