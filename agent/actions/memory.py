"""_MEMORY_WRITE: merge key/value facts into workspace/memory.json."""

from __future__ import annotations

from typing import Any

from agent.actions import ActionContext, ActionError

MAX_KEYS = 50
MAX_VALUE_CHARS = 2000


def memory_write(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    new_memory = params.get("new_memory")
    if not isinstance(new_memory, dict) or not new_memory:
        raise ActionError('new_memory must be a non-empty object, e.g. {"new_memory": {"cat": "Miso"}}')
    if len(new_memory) > MAX_KEYS:
        raise ActionError(f"at most {MAX_KEYS} memory entries at once")
    for key, value in new_memory.items():
        if not str(key).strip():
            raise ActionError("memory keys must not be empty")
        if len(str(value)) > MAX_VALUE_CHARS:
            raise ActionError(f"the value of {key!r} is longer than {MAX_VALUE_CHARS} characters")
    keys = ctx.workspace.merge_memory(new_memory, ctx.conversation)
    return {"saved": keys, "message": f"remembered {', '.join(keys)}"}
