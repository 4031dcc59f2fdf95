"""The agent's side of the wire: send a router action, wait for its reply, return an observation.

`RouterClient.call()` never raises for a router or Redis problem (refusals included): every outcome is an
observation dict the loop can show the LLM. A timeout is `unknown` ("no answer yet"), never a
failure. Each call waits only on its own reply key, so a late reply never lands in a later turn.
`NoRouter` stands in when REDIS_URL is not set.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import redis
from redis.sentinel import MasterNotFoundError

from agent.errors import NotSavedError
from agent.link.redis_pool import BLOCK_SLICE
from protocol.commands import CommandEnvelope
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.keys import Keys
from protocol.origin import Origin
from protocol.redis_safety import RedisUnsafe
from protocol.redis_sentinel import PrimaryFenced
from protocol.replies import OTHERS_WORDS, Reply, Status
from protocol.wire import ProtocolError

if TYPE_CHECKING:
    from agent.link.pending_commands import PendingCommands

log = logging.getLogger("safeclaw.agent.router")
# Redis not serving now: unreachable, or a cluster without a master for a slot yet (a failover
# under way, CLUSTERDOWN / TRYAGAIN). Waited out like an outage, never taken as the command's fault.
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterDownError,
              redis.exceptions.TryAgainError)
SEND_ATTEMPTS = 3  # tries to push a command while Redis is unreachable (backoff 0.2 s, 0.4 s)

Observation = dict[str, Any]


# Failures known to come before a command reached Redis, or from Redis refusing it unrun: a
# connection that could not be opened (refused, timed out, no primary named by Sentinel, a login
# refused, the pool out of connections), a primary that turned replica (READONLY) or is fenced
# (NOREPLICAS), Redis loading, a cluster with no master for the slot yet.
NEVER_ARRIVED_CLASSES = (MasterNotFoundError, redis.BusyLoadingError, redis.AuthenticationError, RedisUnsafe,
                         redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError, PrimaryFenced)
NEVER_ARRIVED = ("connecting to", "Timeout connecting to server", "No connection available",
                 "The previous master is now a slave")


def may_have_arrived(exc: Exception) -> bool:
    """Whether the command of a failed try may have reached Redis and run: any failure after it was
    written (its answer lost to a reset, a timeout, a server killed right after) may be one."""
    if isinstance(exc, NEVER_ARRIVED_CLASSES):
        return False
    return not any(words in str(exc) for words in NEVER_ARRIVED)


class RouterClient:
    def __init__(
        self, conn: redis.Redis, keys: Keys, timeout: float, outbox: PendingCommands | None = None
    ) -> None:
        """`conn`: a client on the process's one pool (`agent.link.redis_pool`)."""
        if timeout <= 0:
            raise ValueError("the router timeout must be positive")
        self.keys = keys
        self.timeout = timeout
        self.outbox = outbox  # commands recorded before sending, so a restart learns their outcome
        self.in_flight: set[str] = set()  # ids a call is waiting on now
        # Told of each command the router holds for the owner's approval (the approval desk).
        self.on_held: Callable[[Observation, str, dict[str, Any]], None] | None = None
        self.conn = conn
        self._down = False

    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "",
        origin: Origin | None = None,
    ) -> Observation:
        """Send one command and wait up to `timeout` seconds for its reply. `intent`
        (`protocol.commands.intent_key(turn, action, params)`) lets the router answer a repeat of the same
        request from the first one's record instead of acting twice. `origin`: whose words the
        command is, as loop code states it (none: the router counts it tainted)."""
        envelope = CommandEnvelope.new(
            action, params, conversation, ttl_seconds=self.timeout, intent=intent, origin=origin
        )
        deadline = time.monotonic() + self.timeout
        if self.outbox is not None:
            try:
                self.outbox.add(envelope)
            except NotSavedError as exc:  # unrecorded, a restart could not learn its outcome: not sent
                return {"status": "error", "error": "not_recorded",
                        "message": f"not sent: the agent cannot record it first ({exc.reason}, {exc.path})"}
        self.in_flight.add(envelope.id)
        try:
            result = self._send_and_wait(envelope, deadline)
        finally:
            self.in_flight.discard(envelope.id)
        if self.outbox is not None and result.get("status") != "unknown":
            with contextlib.suppress(NotSavedError):  # kept in memory; the collector finds no reply
                self.outbox.remove(envelope.id)
        if result.get("status") == "pending_approval" and self.on_held is not None:
            self.on_held(result, action, params)
        return result

    def _send_and_wait(self, envelope: CommandEnvelope, deadline: float) -> Observation:
        try:
            sent = self._send(envelope)
            if sent is False:
                return {"status": "error", "error": "router_unreachable",
                        "message": "cannot reach Redis to send the command to the router; it was not sent"}
        except redis.ResponseError as exc:  # NOPERM (ACL vs key names), OOM, a read-only replica
            log.error("Redis refused the command for the router: %s", exc)
            return {"status": "error", "error": "redis_refused",
                    "message": f"Redis refused the command ({exc}); it was not sent. Check REDIS_URL's "
                    "user and COMMAND_QUEUE against the router's"}
        try:
            return self._wait(envelope, deadline, push_again=sent is None)
        except redis.ResponseError as exc:
            log.error("Redis refused to hand over the router's reply: %s", exc)
            return {"status": "unknown", "message": f"the command was sent but Redis refused to hand over "
                    f"the reply ({exc}); outcome unknown. Check RESPONSE_PREFIX against the router's"}

    def collect_reply(self, command_id: str) -> Observation | None:
        """The reply to a command no call waits on any more (sent before a restart, or timed out),
        if the router has answered it; None while it has not. Redis trouble raises."""
        raw = self.conn.lpop(self.keys.response(command_id))
        if raw is None:
            return None
        self._discard(self.keys.response(command_id))
        return reply_observation(command_id, str(raw))

    def _send(self, envelope: CommandEnvelope) -> bool | None:
        """Push the command: True once Redis says it is queued, False when no try reached Redis (not
        sent), None when a try may have (its answer was lost after it left: it may be queued, and a
        router may run it). Each try pushes the same envelope, so a router runs it once at most."""
        may_be_queued = False
        for attempt in range(SEND_ATTEMPTS):
            try:
                self.conn.lpush(self.keys.command_queue, envelope.to_json())
                self._reachable()
                return True
            except REDIS_DOWN as exc:
                self._unreachable(exc)
                may_be_queued = may_be_queued or may_have_arrived(exc)
                if attempt + 1 < SEND_ATTEMPTS:
                    time.sleep(0.2 * 2**attempt)
            except redis.ResponseError:
                if not may_be_queued:
                    raise  # refused unrun, and no earlier try may have arrived: not sent
                break  # refused now, but an earlier try may be queued
        if may_be_queued:
            log.warning("command %s may be queued (a push's answer was lost); waiting for its reply",
                        envelope.id)
            return None
        return False

    def _wait(self, envelope: CommandEnvelope, deadline: float, push_again: bool = False) -> Observation:
        """The reply, waited for until `deadline`. `push_again`: the push's answer was lost, so the
        command may or may not be queued; it is pushed again (the same envelope: a router runs one id
        once, and answers a copy from its record) once Redis answers, so its real reply comes back
        rather than an `unknown` at the deadline."""
        key = self.keys.response(envelope.id)
        pushed_twice = push_again  # only then can a second reply (the stored one, again) follow
        while (left := deadline - time.monotonic()) > 0:
            try:
                if push_again:
                    try:
                        self.conn.lpush(self.keys.command_queue, envelope.to_json())
                    except REDIS_DOWN:
                        raise  # still away: pushed again on the next turn of the loop
                    except redis.ResponseError as exc:  # refused: the first push may be queued still
                        log.warning("command %s not pushed again (%s); waiting for its reply",
                                    envelope.id, exc)
                    push_again = False
                popped = self.conn.blpop([key], timeout=max(0.01, min(left, BLOCK_SLICE)))
                self._reachable()
            except REDIS_DOWN as exc:  # the command was sent: its outcome is unknown, not failed
                self._unreachable(exc)
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                continue
            if popped is None:
                continue  # this slice of the wait ended; the loop sees whether time is left
            if pushed_twice:
                self._discard(key)
            return observation(envelope, str(popped[1]))
        return {"status": "unknown", "message": f"no answer from the router within {self.timeout:g}s yet; "
                "outcome unknown — it may still happen"}

    def _discard(self, key: str) -> None:
        """Drop a duplicate reply (the stored reply, sent again to a copy pushed twice) so nothing
        lingers for its TTL. A command pushed once has one reply: no round trip for that."""
        with contextlib.suppress(*REDIS_DOWN):  # else it expires on its own
            self.conn.delete(key)

    def _unreachable(self, exc: Exception) -> None:
        if not self._down:
            self._down = True
            log.warning("Redis unreachable (%s: %s); router actions will wait or fail until it is back",
                        type(exc).__name__, exc)

    def _reachable(self) -> None:
        if self._down:
            self._down = False
            log.info("Redis reachable again")

    def routers(self) -> list[dict[str, Any]]:
        """The heartbeats of routers alive now (id, pid, skills, platforms_with_credentials, ts)."""
        found = []
        for key in self.conn.scan_iter(match=self.keys.router_heartbeat("*"), count=100):
            beat = read_heartbeat(self.conn.get(key))
            if beat is not None and is_alive(beat, time.time()):
                found.append(beat)
        return found

    def ping(self) -> bool:
        """True when at least one router's heartbeat is present and fresh."""
        try:
            return bool(self.routers())
        except REDIS_DOWN as exc:
            self._unreachable(exc)
            return False

    def close(self) -> None:
        self.conn.close()


class NoRouter:
    """The router stand-in when REDIS_URL is unset: every router action says how to connect one."""

    def call(
        self, action: str, params: dict[str, Any], conversation: str, intent: str = "",
        origin: Origin | None = None,
    ) -> Observation:
        return {"status": "error", "error": "router_not_connected",
                "message": "router not connected: set REDIS_URL in agent/.env and start the router"}

    def ping(self) -> bool:
        return False

    def close(self) -> None:
        return None


def observation(envelope: CommandEnvelope, raw: str) -> Observation:
    """The reply as the loop shows it to the LLM."""
    return reply_observation(envelope.id, raw)


def reply_observation(command_id: str, raw: str) -> Observation:
    try:
        reply = Reply.from_json(raw)
    except ProtocolError as exc:
        return {"status": "error", "error": "bad_reply",
                "message": f"the router's reply was unreadable: {exc}"}
    if reply.id != command_id:
        return {"status": "error", "error": "bad_reply", "message": "the router answered a different command"}
    if reply.status is Status.OK:
        result: Observation = {"status": "ok", "result": reply.result or {}}
        if reply.message:
            result["message"] = reply.message
    else:
        result = {"status": str(reply.status), "error": reply.error or str(reply.status),
                  "message": reply.message}
    result.update({k: v for k, v in reply.extra.items() if k not in result})
    if reply.others_words is not None:  # labelled by the loop (`agent.flow.observed.labelled`)
        result[OTHERS_WORDS] = reply.others_words
    return result
