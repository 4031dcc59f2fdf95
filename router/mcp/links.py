"""How the MCP server reaches the router: through the queue, or through the one-shot tool.

Both answer a call with the router's `Reply` and never raise for the router's or Redis's
trouble: a command that was sent and not answered is `unknown` (it may still happen), one that
could not be sent is `error`.

`QueueLink` sends each call as a command on the `mcp` login's own queue (the only one its Redis
login may push to) and waits on its own replies (which no other login may read), with an `mcp-` id,
the conversation and origin `mcp`: the router takes that origin from the queue, and dead-letters a
command on it that claims any other. A write's id is bound to
this server's session and the call's arguments: a call repeated with the same arguments (a client
retrying after a timeout) is the same command to the router, so it is answered from the first
one's record, or held under the same approval, never run twice.

`OneShotLink` runs `python -m router.social` per call, in a child process that reads the router's
credentials itself; the server's own process never holds one.

Both are asynchronous (the queue through `redis.asyncio`, the child through anyio), so a call
costs the server no thread and several calls wait at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import anyio
import redis
import redis.asyncio as aioredis
from redis.backoff import NoBackoff
from redis.retry import Retry

from protocol.commands import CommandEnvelope, intent_key
from protocol.hidden import HiddenValues
from protocol.redis_link import RedisUnsafe, async_client
from protocol.replies import Reply, Status
from protocol.wire import ProtocolError
from router.mcp.origin import MCP_ORIGIN, MCP_VIA

REPO_ROOT = Path(__file__).resolve().parents[2]
CONVERSATION = MCP_VIA
MAX_IDLE_CONNECTIONS = 16
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)
MCP_COMMAND_PREFIX = "mcp-"  # the MCP server's command ids, so its commands read as its own in a log


class Link(Protocol):
    async def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply: ...

    async def close(self) -> None: ...


def new_command_id() -> str:
    return f"{MCP_COMMAND_PREFIX}{uuid.uuid4().hex}"


class QueueLink:
    def __init__(self, redis_url: str, response_prefix: str, command_queue: str, timeout: float,
                 accepted_eviction: str = "") -> None:
        self.command_queue = command_queue
        self.response_prefix = response_prefix
        self.timeout = timeout
        self.session = uuid.uuid4().hex  # a write's id holds within one server's life
        self.login = HiddenValues({"REDIS_URL": redis_url})  # the mcp user's password: never printed
        self.accepted_eviction = accepted_eviction  # REDIS_ACCEPT_EVICTION (protocol.redis_safety)
        # One connection per call in flight (a BLPOP holds its connection), kept for the next:
        # cheaper than redis-py's pool and per-read timeouts (a third of the server's time per
        # call); a call's whole wait has one deadline instead.
        self._idle: list[aioredis.Redis] = []
        self._in_flight: dict[str, asyncio.Task[Reply]] = {}

    async def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply:
        """A write's command id is its intent: the same call again (a client's retry) is the same
        command to the router, answered from its record or held under the same approval, never
        run twice. While it is in flight here, a repeat waits for its answer; a call the client
        gave up on (cancelled) goes on waiting for the router, so its retry gets the answer."""
        if not side_effect:
            return await self._send_and_wait(new_command_id(), action, params, "")
        intent = intent_key(f"{CONVERSATION}:{self.session}", action, params)
        command_id = f"{MCP_COMMAND_PREFIX}{intent}"
        task = self._in_flight.get(command_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(
                self._send_and_wait(command_id, action, params, intent)
            )
            self._in_flight[command_id] = task
            task.add_done_callback(lambda _done: self._in_flight.pop(command_id, None))
        return await asyncio.shield(task)

    async def _send_and_wait(
        self, command_id: str, action: str, params: dict[str, Any], intent: str
    ) -> Reply:
        now = time.time()
        envelope = CommandEnvelope(
            id=command_id,
            action=action,
            params=params,
            conversation=CONVERSATION,
            created_at=now,
            expires_at=now + self.timeout,
            intent=intent,
            origin=MCP_ORIGIN,
        )
        client = self._idle.pop() if self._idle else self._connect()
        reusable = False
        try:
            with anyio.move_on_after(self.timeout + 5):
                reply = await self._exchange(client, envelope, action)
                reusable = True
                return reply
            return Reply(
                command_id,
                Status.UNKNOWN,
                f"Redis did not answer within {self.timeout + 5:g}s; {action} may or may not have been sent",
                error="no_answer",
            )
        finally:
            if reusable and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(client)
            else:
                with anyio.CancelScope(shield=True):
                    await client.aclose()

    def _connect(self) -> aioredis.Redis:
        return async_client(self.login["REDIS_URL"], decode_responses=True, socket_connect_timeout=3,
                            retry=Retry(NoBackoff(), 0), accepted_eviction=self.accepted_eviction)

    async def _exchange(self, client: aioredis.Redis, envelope: CommandEnvelope, action: str) -> Reply:
        command_id = envelope.id
        try:
            await client.lpush(self.command_queue, envelope.to_json())
        except RedisUnsafe as exc:
            return Reply(command_id, Status.ERROR, f"{action} was not sent: {exc.reason}",
                         error="redis_unsafe")
        except REDIS_DOWN as exc:
            return Reply(
                command_id,
                Status.ERROR,
                f"{action} was not sent: the router's Redis is unreachable ({type(exc).__name__}); "
                "is SafeClaw running (./safeclaw)?",
                error="router_unreachable",
            )
        except redis.ResponseError as exc:  # NOPERM: not the `mcp` user, or another queue name
            return Reply(
                command_id,
                Status.ERROR,
                f"{action} was not sent: Redis refused it ({exc})",
                error="redis_refused",
            )
        key = f"{self.response_prefix}{command_id}"
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                popped = await client.blpop([key], timeout=max(0.01, left))
            except REDIS_DOWN:
                await asyncio.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                continue
            except redis.ResponseError as exc:
                return Reply(
                    command_id,
                    Status.UNKNOWN,
                    f"{action} was sent but its reply could not be read "
                    f"({exc}); it may or may not have happened",
                    error="reply_unreadable",
                )
            if popped is None:
                break
            return self._reply(envelope, str(popped[1]))
        return Reply(
            command_id,
            Status.UNKNOWN,
            f"no answer from the router within {self.timeout:g}s; "
            f"{action} may still happen (is the router running?)",
            error="no_answer",
        )

    @staticmethod
    def _reply(envelope: CommandEnvelope, raw: str) -> Reply:
        try:
            reply = Reply.from_json(raw)
        except ProtocolError as exc:
            return Reply(
                envelope.id, Status.UNKNOWN, f"the router's reply was unreadable: {exc}", error="bad_reply"
            )
        if reply.id != envelope.id:
            return Reply(
                envelope.id, Status.UNKNOWN, "the router answered another command", error="bad_reply"
            )
        return reply

    async def close(self) -> None:
        while self._idle:
            await self._idle.pop().aclose()


class OneShotLink:
    """Each call in a fresh `python -m router.social`: the seed's one-shot answer, as a Reply."""

    def __init__(self, env: Mapping[str, str], timeout: float) -> None:
        self.env = dict(env)
        self.timeout = timeout

    async def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply:
        command_id = new_command_id()
        request = json.dumps({"action": action, "params": params, "via": CONVERSATION}).encode()
        with anyio.move_on_after(self.timeout) as scope:
            done = await anyio.run_process(
                [sys.executable, "-m", "router.social"],
                input=request,
                check=False,
                cwd=REPO_ROOT,
                env=self.env,
            )
        if scope.cancelled_caught:
            return Reply(
                command_id,
                Status.UNKNOWN,
                f"{action} did not finish within {self.timeout:g}s; it may or may not have happened",
                error="no_answer",
            )
        try:
            answer = json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
            if not isinstance(answer, dict):
                raise ValueError("not an object")
        except (ValueError, IndexError):
            return Reply(
                command_id,
                Status.UNKNOWN,
                f"the one-shot tool gave no answer (exit {done.returncode}); "
                f"{action} may or may not have happened",
                error="bad_reply",
            )
        return reply_of_answer(command_id, answer)

    async def close(self) -> None:
        return None


def reply_of_answer(command_id: str, answer: dict[str, Any]) -> Reply:
    """The one-shot tool's answer (`router.social.cli`) as the router's Reply."""
    if answer.get("success") is True:
        return Reply(command_id, Status.OK, result={k: v for k, v in answer.items() if k != "success"})
    kind = str(answer.get("reason") or answer.get("error") or "internal_error")
    extra: dict[str, Any] = {k: answer[k] for k in ("approval_id", "retry_after") if k in answer}
    if answer.get("outcome") == "unknown":
        status = Status.UNKNOWN
    elif kind == "approval_required" and "approval_id" in answer:
        status = Status.PENDING_APPROVAL
    elif kind in (
        "kill_switch",
        "approval_required",
        "secret_in_text",
        "quota_exceeded",
        "paced",
        "duplicate_content",
        "circuit_open",
        "rate_limited",
        "invalid_params",
        "unknown_command",
    ):
        status = Status.DENIED
    else:
        status = Status.ERROR
    return Reply(command_id, status, str(answer.get("message", "")), error=kind, extra=extra)
