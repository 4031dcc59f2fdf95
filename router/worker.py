"""The router loop: take a command reliably, check it, run its skill at most once, reply.

Take: BLMOVE from the command queue into this router's processing list, so a command is never
only in memory. Done: store the idempotency record, push the (redacted) reply with a TTL, then
remove the command from the processing list, in that order, so a crash between any two steps
is recovered by re-sending the stored reply. (No MULTI/EXEC: Redis before the fix of
redis/redis#14541 silently drops transactions replayed from the AOF when the default user is
off, which SafeClaw requires.) Recovery (at start, after Redis comes
back, and every heartbeat period) re-handles what is left in this router's list and moves over
the lists of routers whose heartbeat is gone. Side-effecting commands keep a record per id:
never started -> run; done -> re-send the stored reply; started, not done -> `unknown`.
A skill that raises is retried up to `max_attempts` only when it has no side effect; a
side-effecting one is answered `unknown` at once. Either way the command ends in the
dead-letter list with the reason. A side-effecting skill's `request_failed` (timeout, 5xx) is
answered `unknown` too: the request may have acted before its answer was lost.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from protocol import CommandEnvelope, ProtocolError, Reply, Status
from router.control_plane import APPROVAL_DECISION, RouterControl, Settle
from router.credentials import platforms_with_credentials, secret_values
from router.dead_letter import DeadLetters
from router.effects import LOCAL_PLATFORM, Effect
from router.errors import ConfigError
from router.lanes import InFlight, Lanes, Once
from router.pipeline import Outcome, Pipeline, Planned, decode
from router.policy import Policy
from router.redaction import Redactor
from router.registry import Skill, SkillContext
from router.settings import RouterSettings

log = logging.getLogger("safeclaw.router.worker")
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)
MAX_BACKOFF_SECONDS = 5.0
PLATFORM_TIMEOUT_SECONDS = 20.0  # one platform request at most, and never past the command's deadline
APPROVAL_POLL_SECONDS = 0.25  # how often decided approvals are looked for between commands
ANSWER_MARGIN_SECONDS = 0.25  # answer this long before the expiry, while the agent still waits


def connect(settings: RouterSettings) -> redis.Redis:
    """A client that fails fast (the worker does its own bounded backoff) and hands back bytes:
    a queue item that is not UTF-8 must reach the worker to be dead-lettered, not end the loop."""
    return redis.Redis.from_url(
        settings.redis_url, decode_responses=False, socket_connect_timeout=3,
        socket_timeout=settings.block_seconds + 10, retry=Retry(NoBackoff(), 0),
    )


class Worker:
    def __init__(
        self, settings: RouterSettings, skills: Mapping[str, Skill], credentials: Mapping[str, str],
        redactor: Redactor | None = None,
    ) -> None:
        self.settings = settings
        self.keys = settings.keys
        self.skills = dict(skills)
        self.credentials = dict(credentials)
        self.redactor = redactor or Redactor(secret_values(settings.env, credentials))
        self.policy = Policy(settings, self.skills)
        self.pipeline = Pipeline(self.skills, self.policy, self.redactor, settings.max_attempts)
        self.control = RouterControl(settings, self.policy, self.redactor)
        self.processing = self.keys.processing(settings.router_id)
        self.dead_letters = DeadLetters(
            self.keys.dead_letter, settings.dead_letter_max, settings.dead_letter_ttl
        )
        self.conn = connect(settings)
        self.started_at = time.time()
        self._stop = threading.Event()
        self._redis_down_since: float | None = None
        self._failures = 0
        self._next_recovery = 0.0
        self._next_poll = 0.0
        self.lanes = Lanes(settings.platform_concurrency, settings.platform_backlog)
        self.in_flight = InFlight()

    # -- lifecycle -------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to exit after the commands in hand (safe from a signal handler)."""
        self._stop.set()

    def run(self) -> None:
        beat = threading.Thread(target=self._heartbeat_loop, name="router-heartbeat", daemon=True)
        beat.start()
        log.info("router %s started; skills: %s", self.settings.router_id, ", ".join(sorted(self.skills)))
        try:
            while not self._stop.is_set():
                self._step()
        finally:
            self._stop.set()
            self.lanes.shutdown()  # the commands in hand finish and are answered
            beat.join(timeout=5)
            self._clear_heartbeat()
            self.conn.close()
            self.control.close()
            log.info("router %s stopped", self.settings.router_id)

    def _step(self) -> None:
        try:
            if time.monotonic() >= self._next_recovery:
                self._recover()
                self._next_recovery = time.monotonic() + self.settings.heartbeat_ttl
            if time.monotonic() >= self._next_poll:  # approvals are rare: not a round trip per command
                self._next_poll = time.monotonic() + APPROVAL_POLL_SECONDS
                self.control.poll(self._run_approved)
                self.control.flush()
            raw = self.conn.blmove(self.keys.command_queue, self.processing, self.settings.block_seconds,
                                   "RIGHT", "LEFT")
            self._redis_ok()
            if raw is not None:
                self._handle(as_bytes(raw))
        except redis.AuthenticationError as exc:
            raise ConfigError(f"Redis refused the router's login ({exc}); check REDIS_URL") from None
        except REDIS_DOWN as exc:
            self._redis_lost(exc)
            self._stop.wait(min(MAX_BACKOFF_SECONDS, 0.1 * 2 ** min(self._failures, 6)))

    def _redis_lost(self, exc: Exception) -> None:
        self._failures += 1
        if self._redis_down_since is None:
            self._redis_down_since = time.monotonic()
            log.warning("Redis unreachable (%s: %s); retrying with backoff up to %.0fs",
                        type(exc).__name__, exc, MAX_BACKOFF_SECONDS)

    def _redis_ok(self) -> None:
        if self._redis_down_since is not None:
            log.info("Redis reachable again after %.1fs", time.monotonic() - self._redis_down_since)
            self._redis_down_since = None
            self._next_recovery = 0.0  # re-handle anything left in our processing list
        self._failures = 0

    # -- heartbeat -------------------------------------------------------------------------
    def heartbeat_value(self, dead_letters: int | None = None, conn: redis.Redis | None = None) -> str:
        """Who this router is; with a connection also today's `quotas` {platform: {kind: {limit,
        used}}}, the open `circuits` and the platforms in `new_account` mode (router.bounds)."""
        value: dict[str, Any] = {
            "dead_letter": dead_letters,
            "router_id": self.settings.router_id, "pid": os.getpid(), "started_at": self.started_at,
            "ts": time.time(), "skills": sorted(self.skills),
            "platforms_with_credentials": platforms_with_credentials(self.credentials),
            "dry_run": self.settings.dry_run, "kill_switch_floor": self.settings.kill_switch,
            "audit": self.control.audit_head,
        }
        if conn is not None:
            try:
                value.update(self.policy.bounds.status(conn, self.policy.clock()))
            except REDIS_DOWN:
                raise
            except Exception:  # the beat itself must go on, or other routers take our commands
                log.exception("cannot read the bounds' counters for the heartbeat")
        return json.dumps(value)

    def _heartbeat_loop(self) -> None:
        conn = connect(self.settings)
        key = self.keys.router_heartbeat(self.settings.router_id)
        try:
            while not self._stop.is_set():
                with contextlib.suppress(*REDIS_DOWN):  # the main loop says so in the log
                    size = self.dead_letters.size(conn)
                    conn.set(key, self.heartbeat_value(size, conn), ex=self.settings.heartbeat_ttl)
                self._stop.wait(self.settings.heartbeat_ttl / 3)
        finally:
            conn.close()

    def _clear_heartbeat(self) -> None:
        with contextlib.suppress(*REDIS_DOWN):  # else it expires on its own
            self.conn.delete(self.keys.router_heartbeat(self.settings.router_id))

    # -- recovery --------------------------------------------------------------------------
    def _recover(self) -> None:
        """Re-handle what is left in our list, then take over the lists of dead routers. Each step
        is contained: one item that cannot be handled is dead-lettered, never a stop."""
        self.dead_letters.age_out(self.conn)
        self.control.poll(self._run_approved, recovering=True)
        skipped: Counter[bytes] = Counter()
        for item in reversed(self.conn.lrange(self.processing, 0, -1)):  # oldest first
            raw = as_bytes(item)
            if skipped[raw] < self.in_flight.count(raw):  # being handled right now, in a lane
                skipped[raw] += 1
                continue
            log.info("recovering a command left in %s", self.processing)
            self._handle(raw, recovering=True)
        prefix = self.keys.processing("").encode()
        for key in self.conn.scan_iter(match=self.keys.processing("*").encode(), count=100):
            other = as_bytes(key)[len(prefix) :].decode("utf-8", "replace")
            if other == self.settings.router_id or self.conn.exists(self.keys.router_heartbeat(other)):
                continue
            while not self._stop.is_set():
                moved = self.conn.lmove(key, self.processing, "RIGHT", "LEFT")
                if moved is None:
                    break
                log.info("recovering a command of router %s (its heartbeat is gone)", other)
                self._handle(as_bytes(moved), recovering=True)

    # -- one command -----------------------------------------------------------------------
    def _handle(self, raw: bytes, recovering: bool = False) -> None:
        """Answer one queue item. Whatever goes wrong short of Redis being down, the item ends
        dead-lettered with its reason and the loop goes on."""
        started = time.monotonic()
        try:
            envelope = decode(raw)
        except ProtocolError as exc:
            self._contained(self._dead_letter, raw, None, f"malformed command: {exc}", readable_id(raw))
            self.control.malformed(readable_id(raw), str(exc))
            return
        planned = self.pipeline.plan(envelope)
        if isinstance(planned, Planned) and not is_own_read(planned.effect):
            self._to_lane(raw, planned, recovering, started)
        else:
            self._complete(raw, envelope, planned, recovering, started)

    def _to_lane(self, raw: bytes, planned: Planned, recovering: bool, started: float) -> None:
        """Hand a command to its platform's lane; answer `busy` (not run) when the lane is full."""
        self.in_flight.add(raw)

        def task() -> None:
            try:
                self._complete(raw, planned.envelope, planned, recovering, started)
            except REDIS_DOWN as exc:  # the command stays in our list; recovery takes it up again
                self._redis_lost(exc)
            finally:
                self.in_flight.remove(raw)

        if not self.lanes.submit(planned.effect.platform, task):
            self.in_flight.remove(raw)
            envelope, platform = planned.envelope, planned.effect.platform
            message = (f"{envelope.action} was not run: the router has {self.lanes.pending(platform)} "
                       f"commands for {platform} in hand; try again shortly")
            busy = Reply(envelope.id, Status.ERROR, message, error="busy", extra={"retry_after": 5})
            self._finish(raw, busy, False)

    def _complete(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply, recovering: bool,
                  started: float) -> None:
        try:
            reply, record = self._decide(envelope, planned, raw, recovering)
            if reply is not None:
                self.control.after(envelope, reply)
                self._finish(raw, reply, record)
                # A PING answered ok is not worth a log line (it was a third of its own cost).
                quiet = isinstance(planned, Planned) and is_own_read(planned.effect) and reply.status == "ok"
                level = logging.DEBUG if quiet else logging.INFO
                log.log(level, "command %s %s -> %s in %.0f ms", envelope.id, envelope.action, reply.status,
                        (time.monotonic() - started) * 1000)
        except REDIS_DOWN:
            raise
        except Exception as exc:  # a bug must not wedge the queue: set the command aside
            log.exception("router error on command %s", envelope.id)
            self._contained(self._dead_letter, raw, envelope.action,
                            f"router error: {type(exc).__name__}: {exc}", envelope.id, "internal_error")

    def _contained(self, step: Any, *args: Any) -> None:
        """Run a dead-lettering step; if even that fails, drop the item from our list so it cannot
        stop this router (or the next) again."""
        try:
            step(*args)
        except REDIS_DOWN:
            raise
        except Exception:
            log.exception("could not dead-letter a command; dropping it from %s", self.processing)
            self._drop(args[0])

    def _drop(self, raw: bytes) -> None:
        self.conn.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

    def _run_approved(self, envelope: CommandEnvelope, settle: Settle) -> bool:
        """A command the owner approved: the same path as from the queue, in its platform's lane,
        past its own expiry (the approval's expiry rules it) and without asking again; the reply
        also goes to its key. False (nothing run) when the lane is full."""
        raw = envelope.to_json().encode("utf-8", "replace")
        planned = self.pipeline.plan(envelope)

        def task() -> None:
            reply, ran = None, False
            try:
                reply = self._approved_run(raw, envelope, planned)
                ran = True
            except REDIS_DOWN as exc:  # it stays held; recovery answers from its record
                self._redis_lost(exc)
            except Exception:
                log.exception("router error on approved command %s", envelope.id)
            finally:
                settle(reply, ran)

        if isinstance(planned, Planned) and not is_own_read(planned.effect):
            return self.lanes.submit(planned.effect.platform, task)
        task()
        return True

    def _approved_run(self, raw: bytes, envelope: CommandEnvelope, planned: Planned | Reply) -> Reply | None:
        reply, record = self._decide(envelope, planned, raw, recovering=False, approved=True)
        self.control.forget(envelope.id)
        if reply is not None:
            self._finish(raw, reply, record)
        return reply

    def _decide(
        self, envelope: CommandEnvelope, planned: Planned | Reply, raw: bytes, recovering: bool,
        approved: bool = False,
    ) -> tuple[Reply | None, bool]:
        """The reply to send, and whether it completes an idempotency record."""
        if envelope.action == APPROVAL_DECISION:
            return self.control.relay(envelope), False
        side_effect = isinstance(planned, Planned) and planned.skill.side_effect
        if side_effect:
            stored = self.conn.get(self.keys.idempotency(envelope.id))
            if stored is not None:
                return self._answer_from_record(envelope, as_bytes(stored).decode("utf-8", "replace")), True
        if envelope.is_expired() and not approved:
            return Reply(envelope.id, Status.EXPIRED, "the command expired before the router ran it; "
                         "it was not run", error="expired"), False
        if not isinstance(planned, Planned):
            return planned, False
        if side_effect and envelope.intent:
            earlier = self._earlier_of_intent(envelope)
            if earlier is not None:  # before policy: the bounds would refuse it as a copy of itself
                return earlier, True
        refused = self.pipeline.check(planned, self.conn)
        if refused is not None:
            self._record_outcome(planned, refused)
            return refused, False
        if recovering and not side_effect and self._too_many_attempts(envelope):
            reason = f"still unanswered after {self.settings.max_attempts} router restarts"
            self._dead_letter(raw, envelope.action, reason, None)
            return Reply(envelope.id, Status.ERROR, f"{envelope.action} failed {self.settings.max_attempts} "
                         "times and was set aside for the router's operator (dead-letter list)",
                         error="internal_error"), False
        if side_effect and envelope.intent:
            repeat = self._repeat_of(envelope)
            if repeat is not None:
                return repeat, True
        if side_effect:
            record = json.dumps({"state": "started", "router_id": self.settings.router_id, "ts": time.time()})
            if not self.conn.set(self.keys.idempotency(envelope.id), record, nx=True,
                                 ex=self.settings.idempotency_ttl):
                log.warning("command %s is already being run elsewhere; dropping this copy", envelope.id)
                self._drop(raw)
                return None, False
        outcome = self._run_within_deadline(raw, planned, approved)
        if outcome is None:  # the deadline answered first
            return None, False
        if outcome.dead_letter is not None:
            self._dead_letter(raw, envelope.action, outcome.dead_letter, None)
        self._record_outcome(planned, outcome.reply)
        return outcome.reply, side_effect

    def _repeat_of(self, envelope: CommandEnvelope) -> Reply | None:
        """The answer to a second command of the same intent, from the first one's record; None
        when this one may run (it is the first, or the first is known not to have acted)."""
        key = self.keys.intent(envelope.intent)
        ttl = self.settings.idempotency_ttl
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

    def _earlier_of_intent(self, envelope: CommandEnvelope) -> Reply | None:
        """The first command's answer when another command already carried this intent; None when
        there is none (or it did not act). Reads only: `_repeat_of` claims the intent later."""
        first = self.conn.get(self.keys.intent(envelope.intent))
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
        return Reply(envelope.id, Status.UNKNOWN, f"the same {envelope.action} (same params, same turn) was "
                     f"already sent as command {first_id} and has not finished; it was not run again",
                     error="repeat_in_progress", extra={"repeat_of": first_id})

    def _run_within_deadline(self, raw: bytes, planned: Planned, approved: bool = False) -> Outcome | None:
        """Run the skill; if it is still running at the command's deadline, answer then (`unknown`
        for a side effect: it may yet happen) and drop the run's own answer when it comes. An
        approved command's own expiry has passed by design: it gets one platform timeout."""
        envelope = planned.envelope
        deadline = time.time() + PLATFORM_TIMEOUT_SECONDS if approved else envelope.expires_at
        left = max(0.05, deadline - time.time() - ANSWER_MARGIN_SECONDS)
        ctx = self.context(envelope, timeout=min(PLATFORM_TIMEOUT_SECONDS, left))
        if is_own_read(planned.effect):
            return self.pipeline.run(planned, ctx)
        once = Once()
        timer = threading.Timer(left, self._deadline_passed, (raw, planned, once))
        timer.daemon = True
        timer.start()
        try:
            outcome = self.pipeline.run(planned, ctx)
        finally:
            timer.cancel()
        if not once.claim():
            log.warning("command %s %s finished after its deadline (%s); its answer was already sent",
                        envelope.id, envelope.action, outcome.reply.status)
            return None
        return outcome

    def _deadline_passed(self, raw: bytes, planned: Planned, once: Once) -> None:
        if not once.claim():
            return
        envelope, side_effect = planned.envelope, planned.skill.side_effect
        if side_effect:
            reply = Reply(envelope.id, Status.UNKNOWN, f"{planned.effect.platform} did not answer before the "
                          f"command's deadline; {envelope.action} may or may not have happened, and it will "
                          "not be retried", error="request_failed")
        else:
            reply = Reply(envelope.id, Status.ERROR, f"{planned.effect.platform} did not answer before the "
                          "command's deadline", error="request_failed")
        log.warning("command %s %s: deadline passed while running", envelope.id, envelope.action)
        try:
            self._record_outcome(planned, reply)
            self.control.after(envelope, reply)
            self._finish(raw, reply, side_effect)
        except Exception:
            log.exception("could not answer command %s at its deadline", envelope.id)

    def _record_outcome(self, planned: Planned, reply: Reply) -> None:
        self.policy.record(planned.effect, planned.envelope, reply, self.conn)

    def _too_many_attempts(self, envelope: CommandEnvelope) -> bool:
        """Counts recoveries of a read-only command: one that kills its router every time it runs
        must end in the dead-letter list, not in an endless restart loop."""
        key = self.keys.attempts(envelope.id)
        pipe = self.conn.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, self.settings.idempotency_ttl)
        return int(pipe.execute()[0]) > self.settings.max_attempts

    def _answer_from_record(self, envelope: CommandEnvelope, stored: str) -> Reply:
        record = json.loads(stored)
        if record.get("state") == "done":
            log.info("command %s already done; re-sending its stored reply", envelope.id)
            return Reply.from_json(json.dumps(record["reply"]))
        log.warning("command %s started earlier and never finished; answering unknown", envelope.id)
        return Reply(envelope.id, Status.UNKNOWN, f"{envelope.action} was interrupted while running; it may "
                     "or may not have happened, and it will not be retried", error="interrupted")

    def context(self, envelope: CommandEnvelope, timeout: float = PLATFORM_TIMEOUT_SECONDS) -> SkillContext:
        return SkillContext(
            timeout=timeout,
            command_id=envelope.id, conversation=envelope.conversation, credentials=self.credentials,
            env={**public_environment(self.settings.env, self.credentials),
                 "ROUTER_ID": self.settings.router_id},
            data_dir=self.settings.data_dir, dry_run=self.settings.dry_run,
            log=logging.getLogger(f"safeclaw.router.skill.{envelope.action}"),
        )

    # -- writing results -------------------------------------------------------------------
    def _finish(self, raw: bytes, reply: Reply, complete_record: bool) -> None:
        """Store the record, push the reply, drop the command; every step safe to repeat."""
        safe = self.pipeline.redact(reply)
        text = self.redactor.text(json.dumps(safe, ensure_ascii=False))
        record = json.dumps({"state": "done", "reply": safe, "ts": time.time()}, ensure_ascii=False)
        response_key = self.keys.response(reply.id)
        audit_lines = self.control.take_mirror()

        def write(pipe: redis.client.Pipeline) -> None:
            self.control.mirror_into(pipe, audit_lines)
            if complete_record:
                pipe.set(self.keys.idempotency(reply.id), utf8(self.redactor.text(record)),
                         ex=self.settings.idempotency_ttl)
            pipe.lpush(response_key, utf8(text))
            pipe.expire(response_key, self.settings.reply_ttl)
            pipe.delete(self.keys.attempts(reply.id))
            pipe.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

        self._write(write)

    def _dead_letter(
        self, raw: bytes, action: str | None, reason: str, reply_id: str | None, kind: str = "invalid_json"
    ) -> None:
        """Set a command aside with the reason; answer it when an id is known and no reply follows."""
        reason = self.redactor.text(reason)  # before any cut below could leave half a secret
        log.error("dead-lettering command %s: %s", reply_id or "(no readable id)", reason)
        entry = self.redactor.text(json.dumps({
            "reason": reason, "action": action, "router_id": self.settings.router_id, "ts": time.time(),
            "command": self.redactor.text(raw[:20_000].decode("utf-8", "replace"))[:10_000],
        }, ensure_ascii=False))

        def write(pipe: redis.client.Pipeline) -> None:
            self.dead_letters.push(pipe, utf8(entry))
            if reply_id is None:
                pipe.lrem(self.processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes

        self._write(write)
        if reply_id is not None:
            message = f"the command was set aside for the router's operator (dead-letter): {reason}"
            self._finish(raw, Reply(reply_id, Status.ERROR, message[:300], error=kind), False)

    def _write(self, write: Any) -> None:
        """Send the steps in one round trip (in order, no MULTI), retried while Redis is down."""
        while True:
            try:
                pipe = self.conn.pipeline(transaction=False)
                write(pipe)
                pipe.execute()
                self._redis_ok()
                return
            except REDIS_DOWN as exc:
                self._redis_lost(exc)
                if self._stop.is_set() and self._failures > 3:
                    log.error("stopping with a finished command unrecorded; it stays in %s", self.processing)
                    return
                delay = min(MAX_BACKOFF_SECONDS, 0.1 * 2 ** min(self._failures, 6))
                if self._stop.is_set():
                    time.sleep(min(delay, 0.5))  # stopping: a few quick tries, then give up
                else:
                    self._stop.wait(delay)


def is_own_read(effect: Effect) -> bool:
    """A read of the router itself (PING): answered in the loop, it touches nothing outside."""
    return effect.platform == LOCAL_PLATFORM and not effect.writes


def as_bytes(value: bytes | str) -> bytes:
    """What the bytes client returns, typed as such (redis-py's stubs say str | bytes)."""
    return value if isinstance(value, bytes) else value.encode("utf-8", "replace")


def utf8(text: str) -> bytes:
    """Text as Redis stores it; a lone surrogate (JSON allows "\\udc00") becomes '?' instead of
    an encoding error that would end the router."""
    return text.encode("utf-8", "replace")


def readable_id(raw: bytes) -> str | None:
    """The command id of a malformed command, if one can be read, so its sender gets an answer."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) and 0 < len(value) <= 128 else None


def public_environment(env: Mapping[str, str], credentials: Mapping[str, str]) -> dict[str, str]:
    """The environment a skill sees as settings: no credential, no secret-named variable, no REDIS_URL."""
    secrets = set(secret_values(env, credentials))
    return {k: v for k, v in env.items() if k != "REDIS_URL" and k not in credentials and v not in secrets}
