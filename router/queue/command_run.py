"""One command on its way through a router, as one value: `CommandRun`.

A run is made where the command enters (`router.queue.taker` for the queue, the approval flow's
stored envelope for an approved one) and moves through plain stages, each reading and adding to
it: decode and plan (`router.pipeline`), read ahead (`ReadAhead`), check, claim, audit, run and
answer (`router.queue.triage`, each stage's answer a `Verdict`), its skill within the deadline
(`router.queue.deadline`), in its platform's lane (`router.queue.handoff`). Whether the owner
approved it is a field of the run, set only on a run built from the approval's stored command: a
copy sent with the same id is another run and is held like any command.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.commands import CommandEnvelope
from protocol.replies import Reply
from router.bounds import Denial
from router.bounds.guard import Held
from router.pipeline import Planned
from router.policy.effects import Effect
from router.queue.records import Claim


@dataclass
class CommandRun:
    raw: bytes  # the queue item as taken (the processing list holds these bytes)
    envelope: CommandEnvelope  # its origin is the one its login may send (`router.queue.senders`)
    planned: Planned | Reply  # the skill and its effect, or the reply that refused it unplanned
    recovering: bool = False  # re-handled from a processing list after a restart or an outage
    # The owner's approval record this very command runs under (the approval flow's), or None.
    approval: Mapping[str, Any] | None = None
    started: float = field(default_factory=time.monotonic)  # for the log line's duration
    taken_at: float = field(default_factory=time.time)  # an approved run's deadline counts from here

    @property
    def approved(self) -> bool:
        return self.approval is not None

    @property
    def side_effect(self) -> bool:
        return isinstance(self.planned, Planned) and self.planned.skill.side_effect

    @property
    def effect(self) -> Effect | None:
        return self.planned.effect if isinstance(self.planned, Planned) else None

    @property
    def id(self) -> str:
        return self.envelope.id


@dataclass
class ReadAhead:
    """The reads of `Decider._read_ahead`: a stored answer, an earlier intent's answer, the switch."""

    kill_switch: bytes | None = None
    switch_read: bool = False
    stored: Reply | None = None
    intent_first: bytes | None = None  # the id holding the command's intent, if any
    bounds: Held | Denial | None = None  # taken ahead (`Policy.stage_bounds`), with the claim
    bounds_taken: bool = False
    claim: Claim | None = None
    in_flight: bool = False  # the command's record says started, not done


@dataclass(frozen=True)
class Verdict:
    """What a run is answered here: None, no reply from here (another copy, or the deadline,
    answers the id); whether the reply completes the command's record; whether the policy checked
    it (its audit line then names the effect)."""

    reply: Reply | None
    completes_record: bool = False
    checked: bool = False


DROPPED = Verdict(None)
