"""PING: is the router alive? No side effect."""

from __future__ import annotations

from typing import Any

from router.policy.effects import LOCAL_PLATFORM, Effect, scopes
from router.registry import Skill, SkillContext


def ping(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    return {"pong": True, "router_id": ctx.env.get("ROUTER_ID", "")}


SKILL = Skill(
    name="PING",
    description="Check that the router is alive. Returns {\"pong\": true}.",
    schema={"type": "object", "properties": {}, "additionalProperties": False},
    side_effect=False,
    run=ping,
    effect=lambda _params: Effect(LOCAL_PLATFORM, "read", public=True),
    effects=scopes([LOCAL_PLATFORM], ["read"]),
)
