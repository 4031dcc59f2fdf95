"""One command in a fresh process: read a JSON object from stdin, run the matching router skill
with the router's credentials, print exactly one JSON object, exit 0 on success and 1 on error.

    echo '{"command": "auth_test", "platform": "bsky"}' | python -m router.social
    echo '{"action": "GET_PROFILE", "params": {"platform": "bsky"}}' | python -m router.social

Answers are `{"success": true, ...result}` or `{"success": false, "error": TYPE, "message": ...}`
with TYPE always one of the seed's nine error types (`SEED_ERRORS`); where the router's own kind
says more it is in `reason` (a bound's refusal is `rate_limited` with `reason` quota_exceeded,
paced, duplicate_content or circuit_open, a `message` naming the bound and when it clears, and
`retry_after` in seconds). With no REDIS_URL the bounds are counted in the embedded store
(`router.bounds.embedded`, a SQLite file in the router's data folder) that every one-shot process
on the machine shares; with REDIS_URL, in Redis with the routers. Credentials come from the environment
and `router/.env` (or the file named by `ROUTER_ENV_FILE`); the environment wins. Everything
printed passes through the router's `Redactor` holding every secret loaded, and no traceback or
raw API body is ever printed: unexpected failures become `internal_error`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from protocol.commands import CommandEnvelope
from protocol.origin import OWNER, Origin
from protocol.replies import Reply, Status
from router.bounds.embedded_commands import StoreError
from router.config.credentials import load_credentials, secret_values
from router.config.env_sources import check_env_file, merged_environment
from router.config.settings import DEFAULT_ENV_FILE
from router.errors import ConfigError
from router.mcp.origin import MCP_ORIGIN, MCP_VIA
from router.platforms import PLATFORM_CLASSES
from router.queue.redis_io import REDIS_DOWN
from router.redaction import RedactingFilter, Redactor
from router.registry import Skill, discover_skills
from router.social.oneshot import OneShotRouter

CLI_TTL_SECONDS = 300
log = logging.getLogger("safeclaw.router.social")

COMMANDS: dict[str, str] = {
    "auth_test": "AUTH_TEST",
    "post": "CREATE_POST",
    "get_profile": "GET_PROFILE",
    "get_notifications": "GET_NOTIFICATIONS",
    "get_post_metrics": "GET_POST_METRICS",
    "delete_post": "DELETE_POST",
}
VIAS = ("cli", MCP_VIA)  # who asked, for the audit log: a person at a shell, or an MCP client
SEED_ERRORS = frozenset({
    "auth_failed", "no_credentials", "unknown_command", "unknown_platform", "invalid_json",
    "empty_input", "rate_limited", "request_failed", "internal_error",
})
# The router's own error kinds under the seed's names; the router's kind goes in `reason`.
# Whatever is not listed (a kind added later) is `internal_error`, never a tenth type.
_SEED_KIND = {
    # a bound or limit: wait and retry (the message says how long)
    "quota_exceeded": "rate_limited", "paced": "rate_limited", "duplicate_content": "rate_limited",
    "circuit_open": "rate_limited", "busy": "rate_limited", "bounds_unavailable": "internal_error",
    # the router's policy said no: not run
    "kill_switch": "request_failed", "approval_required": "request_failed",
    "redis_unavailable": "request_failed",
    "secret_in_text": "request_failed", "invalid_expiry": "request_failed",
    # about the command itself
    "invalid_params": "invalid_json", "not_found": "request_failed", "deleted": "request_failed",
    "login_required": "request_failed", "not_supported": "unknown_command", "crashed": "request_failed",
}


def seed_kind(kind: str) -> str:
    """The seed's error type for one of the router's error kinds."""
    return kind if kind in SEED_ERRORS else _SEED_KIND.get(kind, "internal_error")


class CommandError(Exception):
    """A failure answered as `{"success": false, "error": TYPE, "message": ..., "reason": kind}`."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = seed_kind(kind)
        self.reason = kind if kind != self.kind else None
        self.message = message
        self.retry_after = retry_after

    def answer(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"success": False, "error": self.kind, "message": self.message}
        if self.reason is not None:
            answer["reason"] = self.reason
        if self.retry_after is not None:
            answer["retry_after"] = self.retry_after
        return answer


def utf8_input(stream: TextIO) -> str | None:
    """The whole input as text, or None when it is not UTF-8, whatever the locale says: in the
    POSIX locale Python reads stdin as UTF-8 with surrogate escapes, so undecodable bytes would
    pass as lone surrogates (and read as an unknown command, not as input that is no text)."""
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            return bytes(buffer.read()).decode("utf-8")
        text = stream.read()
        text.encode("utf-8")  # a lone surrogate is no text
    except UnicodeError:
        return None
    return text


def parse_request(raw: str | None) -> dict[str, Any]:
    """The command object from stdin's text, or CommandError(empty_input / invalid_json)."""
    if raw is None:
        raise CommandError("invalid_json", "input is not UTF-8 text")
    if not raw.strip():
        raise CommandError("empty_input", "no input: pipe one JSON object, e.g. {\"command\": \"auth_test\", "
                           "\"platform\": \"bsky\"}")
    try:
        request = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CommandError("invalid_json", f"input is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(request, dict):
        raise CommandError("invalid_json", "input must be one JSON object")
    return request


def resolve(request: dict[str, Any], skills: Mapping[str, Skill]) -> CommandEnvelope:
    """The router command a CLI command maps onto (its params are checked by the pipeline)."""
    if "action" in request:
        return resolve_action(request, skills)
    command = request.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        known = ", ".join(COMMANDS)
        raise CommandError("unknown_command", f"unknown command {str(command)[:40]!r}; known: {known}")
    platform = request.get("platform")
    if not isinstance(platform, str) or platform not in PLATFORM_CLASSES:
        known = ", ".join(sorted(PLATFORM_CLASSES))
        raise CommandError("unknown_platform", f"unknown platform {str(platform)[:40]!r}; known: {known}")
    if COMMANDS[command] not in skills:
        raise CommandError("internal_error", f"this router has no {COMMANDS[command]} skill installed")
    params = {key: value for key, value in request.items() if key != "command"}
    # Whoever runs the one-shot tool is its operator, with the router's own credentials at hand:
    # the words are theirs (no outside text was read by a turn of this router's agent).
    return CommandEnvelope.new(
        COMMANDS[command], params, "cli", ttl_seconds=CLI_TTL_SECONDS, origin=Origin(OWNER, "cli")
    )


def resolve_action(request: dict[str, Any], skills: Mapping[str, Skill]) -> CommandEnvelope:
    """`{"action": NAME, "params": {...}, "via": "mcp"}`: any router action by its own name and
    params (the MCP server without Redis sends these); `via` is cli (default) or mcp."""
    action, params, via = request.get("action"), request.get("params", {}), request.get("via", "cli")
    if set(request) - {"action", "params", "via"}:
        raise CommandError("invalid_json", "an action request has only action, params and via")
    if not isinstance(action, str) or action not in skills:
        known = ", ".join(sorted(skills))
        raise CommandError("unknown_command", f"unknown action {str(action)[:40]!r}; known: {known}")
    if not isinstance(params, dict):
        raise CommandError("invalid_json", "params must be a JSON object")
    if via not in VIAS:
        raise CommandError("invalid_json", f"via must be one of {', '.join(VIAS)}")
    origin = MCP_ORIGIN if via == MCP_VIA else Origin(OWNER, "cli")
    return CommandEnvelope.new(action, params, via, ttl_seconds=CLI_TTL_SECONDS, origin=origin)


def answer_of(reply: Reply) -> dict[str, Any]:
    if reply.status == Status.OK:
        return {"success": True, **(reply.result or {})}
    error = CommandError(reply.error or "internal_error", reply.message, reply.extra.get("retry_after"))
    answer = error.answer()
    if reply.status == Status.UNKNOWN:
        answer["outcome"] = "unknown"  # it may have happened: do not simply retry
    if reply.extra.get("approval_id"):
        answer["approval_id"] = reply.extra["approval_id"]
    return answer


def run_command(raw: str | None, env: Mapping[str, str], redactor: Redactor | None = None) -> dict[str, Any]:
    """The answer object for one command (never raises), through the router's one pipeline."""
    redactor = redactor or Redactor(secret_values(env, load_credentials(env)))
    try:
        request = parse_request(raw)
        try:
            skills = discover_skills()
        except Exception:
            raise CommandError("internal_error", "the router's skills could not be loaded") from None
        envelope = resolve(request, skills)
        try:
            router = OneShotRouter(env, redactor, skills)
        except ConfigError as exc:
            raise CommandError("internal_error", f"router settings: {exc}") from None
        return answer_of(router.run(envelope))
    except CommandError as exc:
        return exc.answer()
    except REDIS_DOWN:
        return {"success": False, "error": "request_failed",
                "message": "Redis (REDIS_URL), which holds the router's policy counters, is unreachable"}
    except StoreError as exc:
        return CommandError("bounds_unavailable", f"{exc}; the command was not run").answer()


def _quiet_logging(redactor: Redactor) -> None:
    """Warnings to stderr, redacted; nothing below WARNING (libraries log bodies at DEBUG)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter(redactor))
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def main(
    stdin: TextIO | None = None, stdout: TextIO | None = None, environ: Mapping[str, str] | None = None
) -> int:
    base = os.environ if environ is None else environ
    env_file = Path(base["ROUTER_ENV_FILE"]) if base.get("ROUTER_ENV_FILE") else DEFAULT_ENV_FILE
    out = stdout or sys.stdout
    try:
        # A line it would skip or a misspelt setting (a kill switch) stops it, naming the line. The
        # file may be shared with the orchestrator's other tools, so other names are left alone.
        check_env_file(env_file, refuse_unknown=False)
        env = merged_environment(env_file, base, refuse_unknown=False)
    except ConfigError as exc:
        refused = {"success": False, "error": "internal_error", "message": f"router settings: {exc}"}
        out.write(json.dumps(refused) + "\n")
        return 1
    redactor = Redactor(secret_values(env, load_credentials(env)))
    _quiet_logging(redactor)
    try:
        answer = run_command(utf8_input(stdin or sys.stdin), env, redactor)
    except Exception as exc:  # a last guard: the contract is one JSON object, never a traceback
        answer = {"success": False, "error": "internal_error", "message": f"unexpected {type(exc).__name__}"}
    out.write(json.dumps(redactor.value(answer), ensure_ascii=False) + "\n")
    out.flush()
    return 0 if answer.get("success") is True else 1
