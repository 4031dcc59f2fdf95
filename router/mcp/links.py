"""How the MCP server reaches the router: through the queue, or through the one-shot tool.

Both answer a call with the router's `Reply` and never raise for the router's or Redis's
trouble: a command that was sent and not answered is `unknown` (it may still happen), one that
could not be sent is `error`.

`QueueLink` sends each call as a command on the queue, as the agent does, with an `mcp-` id (its
Redis login reads only those replies), the conversation `mcp`, and for a write an intent bound to
this server's session and the call's arguments: a call repeated with the same arguments (a client
retrying after a timeout) is answered from the first one's record, never run twice.

`OneShotLink` runs `python -m router.social` per call, in a child process that reads the router's
credentials itself; the server's own process never holds one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from protocol import CommandEnvelope, ProtocolError, Reply, Status, intent_key
from router.config.redis_acl import MCP_COMMAND_PREFIX

REPO_ROOT = Path(__file__).resolve().parents[2]
CONVERSATION = "mcp"
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)


class Link(Protocol):
    def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply: ...

    def close(self) -> None: ...


def new_command_id() -> str:
    return f"{MCP_COMMAND_PREFIX}{uuid.uuid4().hex}"


class QueueLink:
    def __init__(self, redis_url: str, response_prefix: str, command_queue: str, timeout: float) -> None:
        self.command_queue = command_queue
        self.response_prefix = response_prefix
        self.timeout = timeout
        self.session = uuid.uuid4().hex  # a write's intent holds within one server's life
        self.conn = redis.Redis.from_url(
            redis_url,
            decode_responses=True,
            socket_connect_timeout=3,
            socket_timeout=timeout + 5,
            retry=Retry(NoBackoff(), 0),
            max_connections=64,
        )

    def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply:
        intent = intent_key(f"{CONVERSATION}:{self.session}", action, params) if side_effect else ""
        now = time.time()
        envelope = CommandEnvelope(
            id=new_command_id(),
            action=action,
            params=params,
            conversation=CONVERSATION,
            created_at=now,
            expires_at=now + self.timeout,
            intent=intent,
        )
        key = f"{self.response_prefix}{envelope.id}"
        try:
            self.conn.lpush(self.command_queue, envelope.to_json())
        except REDIS_DOWN as exc:
            return Reply(
                envelope.id,
                Status.ERROR,
                f"{action} was not sent: Redis is unreachable ({type(exc).__name__})",
                error="router_unreachable",
            )
        except (
            redis.ResponseError
        ) as exc:  # NOPERM: the login is not the `mcp` user, or the queue's name differs
            return Reply(
                envelope.id,
                Status.ERROR,
                f"{action} was not sent: Redis refused it ({exc})",
                error="redis_refused",
            )
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                popped = self.conn.blpop([key], timeout=max(0.01, left))
            except REDIS_DOWN:
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                continue
            except redis.ResponseError as exc:
                return Reply(
                    envelope.id,
                    Status.UNKNOWN,
                    f"{action} was sent but its reply could not be read "
                    f"({exc}); it may or may not have happened",
                    error="reply_unreadable",
                )
            if popped is None:
                break
            return self._reply(envelope, str(popped[1]))
        return Reply(
            envelope.id,
            Status.UNKNOWN,
            f"no answer from the router within {self.timeout:g}s; {action} "
            "may still happen (is the router running?)",
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

    def close(self) -> None:
        self.conn.close()


class OneShotLink:
    """Each call in a fresh `python -m router.social`: the seed's one-shot answer, as a Reply."""

    def __init__(self, env: Mapping[str, str], timeout: float) -> None:
        self.env = dict(env)
        self.timeout = timeout

    def call(self, action: str, params: dict[str, Any], side_effect: bool) -> Reply:
        command_id = new_command_id()
        request = json.dumps({"action": action, "params": params, "via": CONVERSATION})
        try:
            done = subprocess.run(
                [sys.executable, "-m", "router.social"],
                input=request,
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
                env=self.env,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            return Reply(
                command_id,
                Status.UNKNOWN,
                f"{action} did not finish within {self.timeout:g}s; it may or may not have happened",
                error="no_answer",
            )
        try:
            answer = json.loads(done.stdout.strip().splitlines()[-1])
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

    def close(self) -> None:
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
