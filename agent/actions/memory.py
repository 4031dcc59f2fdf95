"""_MEMORY_WRITE and _MEMORY_FORGET: merge key/value facts into workspace/memory.json, with their provenance.

Only a turn the owner wrote may write memory (`agent.workspace.memory.check_writer`); what the turn had
already read from outside is recorded with each entry, so the prompt shows it fenced, unless the
keys and values are the owner's own words (`agent.link.origin`). Forgetting or overwriting an entry
in a turn that had read outside text needs the owner's message of this turn to name it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.actions.context import ActionContext, ActionError
from agent.errors import NotSavedError
from agent.workspace.memory import MemoryRefused, Provenance, check_writer, entry_value
from protocol.origin import fold, said_by

_KEY_WORD = re.compile(r"[^\W_]+")


def not_on_disk(exc: NotSavedError) -> str:
    """A write the disk refused is kept in memory and written when there is room: say so, not "failed"."""
    return f" (not on disk yet: {exc.reason} at {exc.path}; written as soon as there is room)"


def read_before(new_memory: Any, ctx: ActionContext) -> tuple[str, ...]:
    """The outside text a fact may come from: what the turn had read, unless every key and every
    value is already in the owner's own messages ("remember that my cat is called Tom" after a
    page). A key is words too: a page's order made a key, with "sure" as its value, is the page's."""
    if not ctx.outside_seen:
        return ()
    values = list(new_memory.values()) if isinstance(new_memory, dict) else [new_memory]
    keys = list(map(str, new_memory)) if isinstance(new_memory, dict) else []
    said = all(said_by(v if isinstance(v, str) else json.dumps(v), ctx.owner_words) for v in values)
    if values and said and all(key_said(k, ctx.owner_words) for k in keys):
        return ()
    return tuple(ctx.outside_seen)


def key_said(key: str, owner_words: tuple[str, ...]) -> bool:
    """A key is the owner's when each of its words is one the owner wrote ("cat_name" after "my
    cat's name is Tom"), in any order: the model names keys, but cannot bring in a page's words."""
    words = set(_KEY_WORD.findall(fold(key)))
    said = set(_KEY_WORD.findall(fold(" ".join(owner_words))))
    return bool(words) and words <= said


def check_destruction(keys: list[str], ctx: ActionContext) -> None:
    """Forgetting or changing what is remembered is the owner's to decide: in a turn that had read
    outside text, only the keys the owner's own message of this turn names ("forget the cat")."""
    if not ctx.outside_seen or not keys:
        return
    said = set(_KEY_WORD.findall(fold(ctx.sinks.owner_said if ctx.sinks is not None else "")))
    unnamed = [k for k in keys if not {w for w in _KEY_WORD.findall(fold(k)) if len(w) >= 3} & said]
    if unnamed:
        raise ActionError(
            f"refused: {', '.join(map(repr, unnamed[:5]))} not forgotten or changed: this turn had read "
            f"outside text ({'; '.join(ctx.outside_seen[:2])}) and your owner's message did not name "
            "them. Only your owner's words destroy what is remembered: ask them to say it (/forget <key>)."
        )


def changed_keys(new_memory: Any, memory: dict[str, Any]) -> list[str]:
    """The keys a write would forget (null) or overwrite with another value."""
    if not isinstance(new_memory, dict):
        return []
    return [k for k, v in new_memory.items() if k in memory and (v is None or entry_value(memory[k]) != v)]


def memory_write(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    new_memory = params.get("new_memory")
    note = ""
    try:
        check_writer(ctx.outside_author)
        check_destruction(changed_keys(new_memory, ctx.workspace.load_memory()), ctx)
        provenance = Provenance(ctx.conversation, after_reading=read_before(new_memory, ctx))
        keys = ctx.workspace.merge_memory(new_memory, provenance)
    except MemoryRefused as exc:
        raise ActionError(str(exc)) from None
    except NotSavedError as exc:
        keys, note = sorted(str(k) for k in new_memory or {}), not_on_disk(exc)
    result = {"saved": keys, "message": f"remembered {', '.join(keys)}{note}"}
    return result | ({"disk": note} if note else {})


def memory_forget(params: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    try:
        check_writer(ctx.outside_author)  # forgetting is writing: a stranger cannot erase it either
    except MemoryRefused as exc:
        raise ActionError(str(exc)) from None
    keys = params.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k.strip() for k in keys):
        raise ActionError('keys must be a non-empty list of memory keys, e.g. {"keys": ["cat"]}')
    wanted = [k.strip() for k in keys]
    present = set(ctx.workspace.load_memory())
    check_destruction(sorted(set(wanted) & present), ctx)
    disk_note = ""
    try:
        removed = ctx.workspace.forget_memory(wanted)
    except NotSavedError as exc:
        removed, disk_note = sorted(set(wanted) & present), not_on_disk(exc)
    missing = sorted({k.strip() for k in keys} - set(removed))
    if not removed:
        raise ActionError(f"nothing is remembered under {', '.join(map(repr, missing))}")
    note = f" (nothing was remembered under {', '.join(map(repr, missing))})" if missing else ""
    result = {"forgotten": removed, "message": f"forgot {', '.join(removed)}{note}{disk_note}"}
    return result | ({"disk": disk_note} if disk_note else {})
