"""What every local action is given (`ActionContext`) and may raise (`ActionError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.config.sections import BrowserSettings
from agent.errors import AgentError
from agent.flow.sinks import SinkGuard
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
    sinks: SinkGuard | None = None  # where the turn's owner-only data may go (None: nothing to check)


LocalAction = Callable[[dict[str, Any], ActionContext], dict[str, Any]]
