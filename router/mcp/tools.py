"""The MCP tools, generated from the router's skill registry: one catalogue, one source.

A tool is a skill under its own name, with its description and its JSON schema as the input
schema. Its hints come from the effects the skill declares, never from its name: a skill that
only reads is read-only and idempotent; a write is destructive when it removes or changes what
exists (a delete), idempotent when doing it twice changes nothing more (a like, a delete); a
skill that reaches a social platform is open-world, the router's own notebook and PING are not.
"""

from __future__ import annotations

from collections.abc import Mapping

import mcp_types as types

from router.policy.effects import LOCAL_PLATFORM
from router.registry import Skill

DESTRUCTIVE_KINDS = frozenset({"delete"})
IDEMPOTENT_KINDS = frozenset({"read", "like", "delete"})


def annotations_of(skill: Skill) -> types.ToolAnnotations:
    kinds = {scope.kind for scope in skill.effects}
    platforms = {scope.platform for scope in skill.effects}
    return types.ToolAnnotations(
        title=skill.name.replace("_", " ").capitalize(),
        read_only_hint=not skill.side_effect,
        destructive_hint=bool(kinds & DESTRUCTIVE_KINDS),
        idempotent_hint=kinds <= IDEMPOTENT_KINDS,
        open_world_hint=platforms != {LOCAL_PLATFORM},
    )


def tool_of(skill: Skill) -> types.Tool:
    return types.Tool(
        name=skill.name,
        description=skill.description,
        input_schema=dict(skill.schema),
        annotations=annotations_of(skill),
    )


def catalogue(skills: Mapping[str, Skill], read_only: bool = False) -> dict[str, types.Tool]:
    """The tools by name; with `read_only`, only the skills that change nothing."""
    return {
        name: tool_of(skill)
        for name, skill in sorted(skills.items())
        if not (read_only and skill.side_effect)
    }
