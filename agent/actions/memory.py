"""_MEMORY_WRITE and _MEMORY_FORGET: merge key/value facts into workspace/memory.json, with their provenance.

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


def memory_forget(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    try:
        check_writer(ctx.outside_author)  # forgetting is writing: a stranger cannot erase it either
    except MemoryRefused as exc:
        raise ActionError(str(exc)) from None
    keys = params.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k.strip() for k in keys):
        raise ActionError('keys must be a non-empty list of memory keys, e.g. {"keys": ["cat"]}')
    removed = ctx.workspace.forget_memory([k.strip() for k in keys])
    missing = sorted({k.strip() for k in keys} - set(removed))
    if not removed:
        raise ActionError(f"nothing is remembered under {', '.join(map(repr, missing))}")
    note = f" (nothing was remembered under {', '.join(map(repr, missing))})" if missing else ""
    return {"forgotten": removed, "message": f"forgot {', '.join(removed)}{note}"}
