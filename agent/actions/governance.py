"""The governance actions the agent may call: record a violation, note an unknown, propose a rule.
There is no action to accept a proposal or edit DOS.md: only the owner does that."""

from __future__ import annotations

from typing import Any

from agent.actions.context import ActionContext, ActionError
from agent.governance.files import Governance, GovernanceError


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"{key} must be a non-empty string")
    return value


def sources(ctx: ActionContext) -> tuple[str, ...]:
    """Whose words led to a note: the turn's author if not the owner, and what the turn had read."""
    return tuple([ctx.outside_author] if ctx.outside_author else []) + tuple(ctx.outside_seen)


def record_violation(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    line = Governance(ctx.workspace.root).record_violation(
        _text(params, "what"), ctx.conversation, sources=sources(ctx)
    )
    return {"recorded": line, "file": "governance/VIOLATIONS.md"}


def note_unknown(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    governance = Governance(ctx.workspace.root)
    line = governance.note_unknown(_text(params, "what"), ctx.conversation, sources=sources(ctx))
    return {"recorded": line, "file": "governance/UNKNOWNS.md"}


def propose_rule(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    why = params.get("why", "")
    try:
        proposal = Governance(ctx.workspace.root).propose(
            _text(params, "rule"), why if isinstance(why, str) else "", ctx.conversation, sources=sources(ctx)
        )
    except GovernanceError as exc:
        raise ActionError(str(exc)) from None
    return {
        "proposal": proposal.number,
        "sources": list(proposal.sources),
        "message": f"proposed as #{proposal.number}; only the owner can accept it into DOS.md",
    }
