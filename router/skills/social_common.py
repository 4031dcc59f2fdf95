"""What the social skills share: the params schema pieces, the dry-run outbox, the platform
call guard and the sanitising of what other people wrote."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from protocol.untrusted import sanitise_item
from router.errors import SkillError
from router.platforms import PLATFORM_CLASSES, REBUILD_AFTER, client_for, forget, platform_class
from router.platforms.base import PlatformClient, no_check
from router.platforms.http_errors import error_from_exception
from router.policy.effects import Effect, Scope, scopes
from router.registry import SkillContext

PLATFORMS = sorted(PLATFORM_CLASSES)
PLATFORM_PARAM: dict[str, Any] = {"type": "string", "enum": PLATFORMS, "description": "which social network"}
POST_ID_PARAM: dict[str, Any] = {
    "type": "string", "minLength": 1, "maxLength": 500,
    "description": "the post's id on the platform, or its public URL",
}
OUTBOX_FILE = "outbox.jsonl"

T = TypeVar("T")


def reads(params: dict[str, Any]) -> Effect:
    """The effect of a read on the platform the params name."""
    return Effect(params["platform"], "read")


def on_every_platform(*kinds: str) -> frozenset[Scope]:
    return scopes(PLATFORMS, kinds)


def params_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON Schema of an object with exactly these properties."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def platform_call(platform: str, doing: str, call: Callable[[], T]) -> T:
    """Run a platform call; whatever it raises leaves as a SkillError with a safe message."""
    try:
        return call()
    except SkillError:
        raise
    except Exception as exc:
        raise error_from_exception(exc, platform, doing) from None


def on_platform(platform: str, ctx: SkillContext, doing: str, action: Callable[[PlatformClient], T]) -> T:
    """Run `action` with this lane's kept client of `platform` (built now if none is kept), its
    writes asking the command's last-moment check (`ctx.last_moment`) right before they leave; a
    failure that may have broken the client (its connection, its session) drops it, so the next
    command builds a fresh one."""
    client = platform_call(platform, "setup", lambda: client_for(platform, ctx))
    client.last_moment = ctx.last_moment or no_check  # this command's, asked before each write leaves
    try:
        return platform_call(platform, doing, lambda: action(client))
    except SkillError as error:
        if error.kind in REBUILD_AFTER:
            forget(platform, client)
        raise
    except BaseException:
        forget(platform, client)
        raise
    finally:
        client.last_moment = no_check  # a kept client carries no command's check into the next


def missing_credentials(platform: str, ctx: SkillContext) -> list[str]:
    return [name for name in platform_class(platform).required if not ctx.credentials.get(name)]


def record_dry_run(action: str, platform: str, params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Append what a side-effecting skill would send to the outbox instead of sending it.

    No credentials are needed: dry run is how a new user watches the agent before giving it
    an account. The result names what is missing for the real thing."""
    line = {"ts": time.time(), "command_id": ctx.command_id, "action": action,
            "platform": platform, "params": params}
    ctx.data_dir.mkdir(parents=True, exist_ok=True)
    with (ctx.data_dir / OUTBOX_FILE).open("a", encoding="utf-8") as outbox:
        outbox.write(json.dumps(line, ensure_ascii=False) + "\n")
    result: dict[str, Any] = {
        "dry_run": True, "would_send": {"action": action, "platform": platform, "params": params},
    }
    missing = missing_credentials(platform, ctx)
    if missing:
        result["to_send_for_real"] = f"set {', '.join(missing)} in router/.env and turn ROUTER_DRY_RUN off"
    return result


def clean(item: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """One record other people wrote, sanitised and flagged."""
    return sanitise_item(item, ctx.max_text_chars)


def clean_all(items: list[dict[str, Any]], ctx: SkillContext) -> list[dict[str, Any]]:
    return [clean(item, ctx) for item in items]
