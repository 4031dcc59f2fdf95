"""Local actions: what the agent does itself. Each is `fn(params, ctx) -> result dict`.

An action that needs another calls it directly (browser vision summarises the page it saved).
An action's expected failure raises `ActionError`; the loop shows its message to the LLM as an
observation.
"""

from __future__ import annotations

from agent.actions import browser_vision, governance, memory, summary
from agent.actions.context import ActionContext as ActionContext
from agent.actions.context import ActionError as ActionError
from agent.actions.context import LocalAction


def local_actions() -> dict[str, LocalAction]:
    """Every local action by name (selenium is imported by the browser only when it runs)."""
    return {
        "_MEMORY_WRITE": memory.memory_write,
        "_MEMORY_FORGET": memory.memory_forget,
        "_LLM_SUMMARY": summary.llm_summary,
        "_BROWSER_VISION": browser_vision.browser_vision,
        "_RECORD_VIOLATION": governance.record_violation,
        "_NOTE_UNKNOWN": governance.note_unknown,
        "_PROPOSE_RULE": governance.propose_rule,
    }
