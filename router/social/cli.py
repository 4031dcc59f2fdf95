"""One command in a fresh process: read a JSON object from stdin, run the matching router skill
with the router's credentials, print exactly one JSON object, exit 0 on success and 1 on error.

    echo '{"command": "auth_test", "platform": "bsky"}' | python -m router.social

Answers are `{"success": true, ...result}` or `{"success": false, "error": TYPE, "message": ...}`
with TYPE one of the seed's error types (`SEED_ERRORS`). Credentials come from the environment
and `router/.env` (or the file named by `ROUTER_ENV_FILE`); the environment wins. Everything
printed passes through the router's `Redactor` holding every secret loaded, and no traceback or
raw API body is ever printed: unexpected failures become `internal_error`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from router.credentials import load_credentials, secret_values
from router.errors import SkillError
from router.platforms import PLATFORM_CLASSES
from router.redaction import RedactingFilter, Redactor
from router.registry import Skill, SkillContext, discover_skills
from router.settings import DEFAULT_ENV_FILE, ROUTER_DIR, merged_environment
from router.worker import public_environment

COMMANDS: dict[str, str] = {
    "auth_test": "AUTH_TEST",
    "post": "CREATE_POST",
    "get_profile": "GET_PROFILE",
    "get_notifications": "GET_NOTIFICATIONS",
    "get_post_metrics": "GET_POST_METRICS",
    "delete_post": "DELETE_POST",
}
SEED_ERRORS = frozenset({
    "auth_failed", "no_credentials", "unknown_command", "unknown_platform", "invalid_json",
    "empty_input", "rate_limited", "request_failed", "internal_error",
})
# The router's own error kinds that the seed's contract has no name for.
_SEED_KIND = {"invalid_params": "invalid_json", "not_found": "request_failed",
              "not_supported": "unknown_command"}


class CommandError(Exception):
    """A failure answered as `{"success": false, "error": kind, "message": message}`."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind if kind in SEED_ERRORS else _SEED_KIND.get(kind, "internal_error")
        self.message = message
        self.retry_after = retry_after


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


def resolve(request: dict[str, Any], skills: Mapping[str, Skill]) -> tuple[Skill, dict[str, Any]]:
    """The skill a command maps onto and its validated params."""
    command = request.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        known = ", ".join(COMMANDS)
        raise CommandError("unknown_command", f"unknown command {str(command)[:40]!r}; known: {known}")
    platform = request.get("platform")
    if not isinstance(platform, str) or platform not in PLATFORM_CLASSES:
        known = ", ".join(sorted(PLATFORM_CLASSES))
        raise CommandError("unknown_platform", f"unknown platform {str(platform)[:40]!r}; known: {known}")
    skill = skills.get(COMMANDS[command])
    if skill is None:
        raise CommandError("internal_error", f"this router has no {COMMANDS[command]} skill installed")
    params = {key: value for key, value in request.items() if key != "command"}
    problem = skill.validation_error(params)
    if problem is not None:
        raise CommandError("invalid_json", f"invalid parameters for {command}: {problem}")
    return skill, params


def skill_context(env: Mapping[str, str], credentials: Mapping[str, str]) -> SkillContext:
    return SkillContext(
        command_id=uuid.uuid4().hex,
        conversation="cli",
        credentials=credentials,
        env=public_environment(env, credentials),
        data_dir=Path(env.get("ROUTER_DATA_DIR") or ROUTER_DIR),
        dry_run=env.get("ROUTER_DRY_RUN", "").strip().lower() in ("1", "true", "yes", "on"),
        log=logging.getLogger("safeclaw.router.social"),
    )


def run_command(raw: str | None, env: Mapping[str, str]) -> dict[str, Any]:
    """The answer object for one command (never raises)."""
    credentials = load_credentials(env)
    try:
        request = parse_request(raw)
        try:
            skills = discover_skills()
        except Exception:
            raise CommandError("internal_error", "the router's skills could not be loaded") from None
        skill, params = resolve(request, skills)
        ctx = skill_context(env, credentials)
        try:
            result = skill.run(params, ctx)
        except SkillError as exc:
            raise CommandError(exc.kind, exc.message, exc.retry_after) from None
        except Exception as exc:
            failure = f"{skill.name} failed unexpectedly ({type(exc).__name__})"
            raise CommandError("internal_error", failure) from None
        return {"success": True, **result}
    except CommandError as exc:
        answer: dict[str, Any] = {"success": False, "error": exc.kind, "message": exc.message}
        if exc.retry_after is not None:
            answer["retry_after"] = exc.retry_after
        return answer


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
    env = merged_environment(env_file, base)
    redactor = Redactor(secret_values(env, load_credentials(env)))
    _quiet_logging(redactor)
    try:
        try:
            raw: str | None = (stdin or sys.stdin).read()
        except UnicodeDecodeError:
            raw = None
        answer = run_command(raw, env)
    except Exception as exc:  # a last guard: the contract is one JSON object, never a traceback
        answer = {"success": False, "error": "internal_error", "message": f"unexpected {type(exc).__name__}"}
    out = stdout or sys.stdout
    out.write(json.dumps(redactor.value(answer), ensure_ascii=False) + "\n")
    out.flush()
    return 0 if answer.get("success") is True else 1
