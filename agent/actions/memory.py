"""_MEMORY_WRITE: merge key/value facts into workspace/memory.json, with their provenance.

Only a turn the owner wrote may write memory (`agent.memory.check_writer`); what the turn had
already read from outside is recorded with each entry, so the prompt shows it fenced.
"""

from __future__ import annotations

from typing import Any

from agent.actions import ActionContext, ActionError
from agent.memory import MemoryRefused, Provenance, check_writer


def memory_write(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    try:
        check_writer(ctx.outside_author)
        provenance = Provenance(ctx.conversation, after_reading=tuple(ctx.outside_seen))
        keys = ctx.workspace.merge_memory(params.get("new_memory"), provenance)
    except MemoryRefused as exc:
        raise ActionError(str(exc)) from None
    return {"saved": keys, "message": f"remembered {', '.join(keys)}"}
