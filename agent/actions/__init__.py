"""Local actions: what the agent does itself. Each is `fn(params, ctx) -> result dict`.

An action that needs another calls it directly (browser vision summarises the page it saved).
An action's expected failure raises `ActionError`; the loop shows its message to the LLM as an
observation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.config.sections import BrowserSettings
from agent.errors import AgentError
from agent.llm.base import BaseLLM
from agent.workspace.folder import Workspace


class ActionError(AgentError):
    """A local action could not do what was asked; the message is for the LLM and the user."""


@dataclass
class ActionContext:
    workspace: Workspace
    llm: BaseLLM
    conversation: str
    browser: BrowserSettings = field(default_factory=BrowserSettings)  # the "browser" section of config.json
    outside_author: str | None = None  # who wrote the turn when it was not the owner
    outside_seen: list[str] = field(default_factory=list)  # outside data the turn's prompt showed
    owner_words: tuple[str, ...] = ()  # the owner's own messages the turn's prompt showed


LocalAction = Callable[[dict[str, Any], ActionContext], dict[str, Any]]


def local_actions() -> dict[str, LocalAction]:
    """Every local action by name; modules with heavy imports load them only when run."""
    from agent.actions.browser_vision import browser_vision  # imports selenium only when run
    from agent.actions.memory import memory_forget, memory_write
    from agent.actions.summary import llm_summary
    from agent.governance.actions import note_unknown, propose_rule, record_violation

    return {
        "_MEMORY_WRITE": memory_write,
        "_MEMORY_FORGET": memory_forget,
        "_LLM_SUMMARY": llm_summary,
        "_BROWSER_VISION": browser_vision,
        "_RECORD_VIOLATION": record_violation,
        "_NOTE_UNKNOWN": note_unknown,
        "_PROPOSE_RULE": propose_rule,
    }
