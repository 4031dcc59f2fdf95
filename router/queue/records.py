"""A command's records in Redis: what makes a side effect happen at most once.

Idempotency (`Keys.idempotency(id)`): `started` when a side-effecting command is about to run,
`done` with its reply when answered; a command seen again is answered from it. Intent
(`Keys.intent(key)`): the first command of an intent (action and params within one turn); a
repeat is answered from the first one's record instead of acting again. Attempts: how often a
read-only command was recovered, so one that kills its router ends in the dead-letter list.

Both records are bound to what the command asks for (its fingerprint: action and params), since
the agent's login may forge any id or intent: a command that reuses another's id with other
params is refused (`id_reused`), never answered with the other's result; the intent record is
keyed by the intent and the fingerprint, so a forged intent only ever matches the same words.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

import redis

from protocol.commands import CommandEnvelope, command_fingerprint
from protocol.replies import Reply, Status
from router.bounds import Staged
from router.config.settings import RouterSettings
from router.queue.claim_step import ClaimScript, GatedCommands, ScriptStaged
from router.queue.redis_io import as_bytes

log = logging.getLogger("safeclaw.router.worker")
ID_REUSED = "id_reused"  # the error of a command whose id another command with other params holds


def fingerprint(envelope: CommandEnvelope) -> str:
    return command_fingerprint(envelope.action, envelope.params)


class CommandRecords:
    def __init__(self, conn: redis.Redis, settings: RouterSettings) -> None:
        self.conn = conn
        self.keys = settings.keys
        self.router_id = settings.router_id
        self.ttl = settings.idempotency_ttl
        self.max_attempts = settings.max_attempts
        self.script = ClaimScript(conn)

    def stored_reply(self, envelope: CommandEnvelope) -> Reply | None:
        """The answer from this command's own record, when it has one; `id_reused` (never to be
        stored as this id's answer) when the record is of another command with the same id."""
        pipe = self.conn.pipeline(transaction=False)
        self.queue_stored(pipe, envelope)
        stored, first = pipe.execute()
        return self.stored_from(envelope, stored, first)

    def queue_stored(self, pipe: Any, envelope: CommandEnvelope) -> None:
        """Queue the two reads of `stored_reply` on a caller's pipeline (GET record, GET fingerprint)."""
        pipe.get(self.keys.idempotency(envelope.id))
        pipe.get(self.keys.fingerprint(envelope.id))

    def stored_from(self, envelope: CommandEnvelope, stored: Any, first: Any) -> Reply | None:
        """`stored_reply` from the answers of `queue_stored`."""
        if stored is None:
            return None
        if first is not None and as_bytes(first).decode("ascii", "replace") != fingerprint(envelope):
            log.warning("command %s reuses the id of another command with other params; refused", envelope.id)
            return Reply(
                envelope.id,
                Status.DENIED,
                f"{envelope.action} was not run: its id was already used by a command with other params "
                "(a command id names one command; send a new id)",
                error=ID_REUSED,
            )
        return self.answer_from_record(envelope, as_bytes(stored).decode("utf-8", "replace"))

    @staticmethod
    def in_flight(stored: Any) -> bool:
        """The record (the answer of `queue_stored`'s GET) says started, not done."""
        try:
            record = json.loads(stored) if stored is not None else None
        except ValueError:
            return False
        return isinstance(record, dict) and record.get("state") == "started"

    def claim(self, envelope: CommandEnvelope) -> bool:
        """Mark the command started; False when another copy of it already is."""
        claim = self.claim_of(envelope)
        claim.take()
        return claim.won

    def claim_of(self, envelope: CommandEnvelope) -> Claim:
        """The claim, to take with the bounds as one step (`router.policy.decisions.Ahead`)."""
        return Claim(self, envelope)

    def unclaim(self, claim: Claim) -> None:
        """Give back a claim won for a command that will not run (refused by the bounds in the
        claim's own step): a copy sent again is checked again, as if never claimed."""
        keys = [self.keys.idempotency(claim.envelope.id)] if claim.won else []
        keys += [self.keys.fingerprint(claim.envelope.id)] if claim.bound else []
        if keys:
            self.conn.delete(*keys)

    def intent_key(self, envelope: CommandEnvelope) -> str:
        """The intent record's key: the sender's intent bound to what the command asks for."""
        bound = hashlib.sha256(f"{envelope.intent}\n{fingerprint(envelope)}".encode("ascii")).hexdigest()
        return self.keys.intent(bound[:48])

    def repeat_of(self, envelope: CommandEnvelope) -> Reply | None:
        """The answer to a second command of the same intent, from the first one's record; None
        when this one may run (it is the first, or the first is known not to have acted)."""
        key = self.intent_key(envelope)
        ttl = self.ttl
        if self.conn.set(key, envelope.id, nx=True, ex=ttl):
            return None
        first = self.conn.get(key)
        first_id = as_bytes(first).decode("utf-8", "replace") if first is not None else envelope.id
        if first_id == envelope.id:
            return None
        answer = self._answer_of_first(envelope, first_id)
        if answer is None:
            self.conn.set(key, envelope.id, ex=ttl)  # the first did not act: this one may
        return answer

    def earlier_of_intent(self, envelope: CommandEnvelope) -> Reply | None:
        """The first command's answer when another command already carried this intent; None when
        there is none (or it did not act). Reads only: `repeat_of` claims the intent later."""
        return self.earlier_from(envelope, self.conn.get(self.intent_key(envelope)))

    def queue_intent(self, pipe: Any, envelope: CommandEnvelope) -> None:
        """Queue the read of `earlier_of_intent` on a caller's pipeline."""
        pipe.get(self.intent_key(envelope))

    def earlier_from(self, envelope: CommandEnvelope, first: Any) -> Reply | None:
        """`earlier_of_intent` from the answer of `queue_intent`."""
        first_id = as_bytes(first).decode("utf-8", "replace") if first is not None else envelope.id
        return None if first_id == envelope.id else self._answer_of_first(envelope, first_id)

    def _answer_of_first(self, envelope: CommandEnvelope, first_id: str) -> Reply | None:
        stored = self.conn.get(self.keys.idempotency(first_id))
        record = json.loads(stored) if stored is not None else {}
        reply = record.get("reply") if record.get("state") == "done" else None
        if isinstance(reply, dict) and reply.get("status") in ("error", "denied", "expired"):
            return None
        log.warning("command %s repeats the intent of %s; answering from its record", envelope.id, first_id)
        if isinstance(reply, dict):
            return Reply.from_json(json.dumps({**reply, "id": envelope.id, "repeat_of": first_id}))
        return Reply(
            envelope.id,
            Status.UNKNOWN,
            f"the same {envelope.action} (same params, same turn) was "
            f"already sent as command {first_id} and has not finished; it was not run again",
            error="repeat_in_progress",
            extra={"repeat_of": first_id},
        )

    def too_many_attempts(self, envelope: CommandEnvelope) -> bool:
        """Counts recoveries of a read-only command: one that kills its router every time it runs
        must end in the dead-letter list, not in an endless restart loop."""
        key = self.keys.attempts(envelope.id)
        pipe = self.conn.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, self.ttl)
        return int(pipe.execute()[0]) > self.max_attempts

    def answer_from_record(self, envelope: CommandEnvelope, stored: str) -> Reply:
        record = json.loads(stored)
        if record.get("state") == "done":
            log.info("command %s already done; re-sending its stored reply", envelope.id)
            return Reply.from_json(json.dumps(record["reply"]))
        log.warning("command %s started earlier and never finished; answering unknown", envelope.id)
        return Reply(
            envelope.id,
            Status.UNKNOWN,
            f"{envelope.action} was interrupted while running; it may "
            "or may not have happened, and it will not be retried",
            error="interrupted",
        )


class Claim:
    """A side-effecting command's claim: its `started` record and its fingerprint, each SET NX.
    `won`: the record is ours (no other copy runs); `bound`: the fingerprint is ours too. With
    commands gated on it (the bounds' and rate limits' shares), it is one atomic step with them
    (`router.queue.claim_step`): a copy that loses the claim takes no share."""

    def __init__(self, records: CommandRecords, envelope: CommandEnvelope) -> None:
        self.records = records
        self.envelope = envelope
        self.taken = False
        self.won = False
        self.bound = False
        self._record = self._fingerprint = ""

    def commands(self) -> GatedCommands:
        """Where the bounds stage the commands that run only if this claim is won."""
        return GatedCommands()

    def stage(self, pipe: Any, gated: GatedCommands | None = None) -> Staged[list[Any] | None]:
        """The claim (and the gated commands) on the caller's pipeline; settled: the gated
        commands' answers, or None when another copy holds the claim (nothing was taken)."""
        records, envelope = self.records, self.envelope
        self._record = json.dumps({"state": "started", "router_id": records.router_id, "ts": time.time()})
        self._fingerprint = fingerprint(envelope)
        keys = (records.keys.idempotency(envelope.id), records.keys.fingerprint(envelope.id))
        if gated is None or not len(gated):  # nothing rides on it: two plain SET NX
            pipe.set(keys[0], self._record, nx=True, ex=records.ttl)
            pipe.set(keys[1], self._fingerprint, nx=True, ex=records.ttl)
            return Staged(2, self._settle)
        sent = records.script.queue(pipe, keys, (self._record, self._fingerprint, records.ttl), gated)
        return ScriptStaged(1, lambda conn, answers: self._settle_script(conn, answers[0], gated, *sent))

    def _settle(self, conn: Any, answers: list[Any]) -> list[Any] | None:
        """Won only on Redis's plain OK; any other answer (nil, or a reply of another type from a
        garbled connection) is checked against what the key holds (this claim's record, unique by
        router and time): a claim Redis took but whose answer was lost is still ours, and dropping
        its command would leave it never answered. The fingerprint, the same for every copy of the
        command, is ours on OK, or on an answer that is neither OK nor Redis's nil and finds it."""
        keys, command_id = self.records.keys, self.envelope.id
        self.won = answers[0] is True or _holds(conn, keys.idempotency(command_id), self._record)
        self.bound = answers[1] is True or (
            answers[1] is not None and _holds(conn, keys.fingerprint(command_id), self._fingerprint))
        return [] if self.won else None

    def _settle_script(self, conn: Any, answer: Any, gated: GatedCommands, keys: list[str],
                       args: list[Any]) -> list[Any] | None:
        """The script's answer: lost ({0, 0}), or won with the gated commands' answers. One that
        is not the script's shape (a garbled connection) is read back: lost unless the record is
        ours; ours, the shares it took are unknown, so the command is not run (raised: its item
        is set aside and answered `unknown`, and the shares stay counted, the safe side)."""
        answer = self.records.script.answer(conn, answer, keys, args)
        if isinstance(answer, list) and len(answer) >= 2 and answer[0] in (0, 1):
            self.won, self.bound = answer[0] == 1, answer[1] == 1
            return gated.parse(answer[2:]) if self.won else None
        self.won = _holds(conn, keys[0], self._record)
        if not self.won:
            return None
        self.bound = _holds(conn, keys[1], self._fingerprint)
        raise redis.ResponseError("the claim's script answered garbled: the shares it took are unknown")

    def take(self) -> None:
        """Send the claim alone, unless a bounds' round trip carried it already."""
        if not self.taken:
            pipe = self.records.conn.pipeline(transaction=False)
            self.stage(pipe).take(self.records.conn, pipe)
            self.taken = True


def _holds(conn: Any, key: str, value: str) -> bool:
    return as_bytes(conn.get(key) or b"") == value.encode()
