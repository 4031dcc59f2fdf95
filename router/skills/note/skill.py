"""NOTE: append a note to `<data_dir>/notes.jsonl`, a file the router owns (a side effect)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from router.policy.effects import LOCAL_PLATFORM, Effect, scopes
from router.registry import Skill, SkillContext

NOTES_FILE = "notes.jsonl"


def note(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if ctx.dry_run:
        return {"written": False, "would_write": params["text"]}
    line = json.dumps({"id": ctx.command_id, "conversation": ctx.conversation, "text": params["text"],
                       "ts": time.time()}, ensure_ascii=False)
    ctx.data_dir.mkdir(parents=True, exist_ok=True)
    path = ctx.data_dir / NOTES_FILE
    # One write of one line in append mode: lines from several routers never interleave.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return {"written": True, "file": NOTES_FILE}


SKILL = Skill(
    name="NOTE",
    description="Append a short note to the router's notebook (a file the router owns).",
    schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 2000},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    side_effect=True,
    run=note,
    effect=lambda params: Effect(LOCAL_PLATFORM, "post", params["text"]),
    effects=scopes([LOCAL_PLATFORM], ["post"]),
)
