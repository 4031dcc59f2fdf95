"""One read of the workspace per turn: templates, catalogues, memory, history and the artifact.

A turn loads a `TurnSnapshot` once and builds every step's prompt from it; only what the turn
itself changes is updated in it (the artifact it saves, memory after a memory action), so a
two-step turn reads each file once instead of once per step. Memory comes indexed, and parsed
again only when memory.json changed (`agent.workspace.memory_index`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.llm.turn import TurnRequest
from agent.workspace.folder import Workspace
from agent.workspace.memory_index import MemoryIndex


def for_conversation(actions: list[dict[str, Any]], conversation: str) -> list[dict[str, Any]]:
    """The actions offered in `conversation`: an entry with `conversations` is offered only there."""
    return [a for a in actions if conversation in a.get("conversations", [conversation])]


@dataclass
class TurnSnapshot:
    template: str  # PROMPT.md (or the provider's own template)
    soul: str
    memory_index: MemoryIndex  # memory as the workspace last read it: shared, never change it
    agent_actions: list[dict[str, Any]]
    router_actions: list[dict[str, Any]]
    history: list[dict[str, Any]]  # the conversation's turns before this one
    artifact: dict[str, Any]
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # params of each action the LLM may name

    @classmethod
    def load(
        cls, workspace: Workspace, template_name: str, conversation: str, local_names: set[str] | None = None
    ) -> TurnSnapshot:
        snapshot = cls(
            template=workspace.read_template(template_name),
            soul=workspace.read_template("SOUL.md").strip(),
            memory_index=workspace.memory_index(),
            agent_actions=for_conversation(workspace.read_catalogue("agent_action.json"), conversation),
            router_actions=workspace.read_catalogue("router_actions.json"),
            history=workspace.load_history(conversation),
            artifact=workspace.load_artifact(),
        )
        snapshot.schemas = snapshot.action_schemas(local_names)
        return snapshot

    @property
    def memory(self) -> dict[str, Any]:
        """Memory's entries (shared with the index: read them, never change them)."""
        return self.memory_index.memory

    def action_schemas(self, local_names: set[str] | None) -> dict[str, dict[str, Any]]:
        """Router actions listed, and the local ones the agent has (all listed ones when None)."""
        schemas: dict[str, dict[str, Any]] = {}
        for entry in self.router_actions:
            schemas[entry["name"]] = entry.get("params") or {"type": "object"}
        for entry in self.agent_actions:
            if local_names is None or entry["name"] in local_names:
                schemas[entry["name"]] = entry.get("params") or {"type": "object"}
        return schemas

    def request_for(self, user_message: str, outside_author: str | None = None, private_hidden: bool = False
                    ) -> TurnRequest:
        """What a provider may read besides the prompt (the embedded model chooses from the schemas).
        Memory holds only the owner's own words: an entry from elsewhere is never recalled as fact;
        and for a turn someone else wrote, or a step of the owner's shown nothing private
        (`private_hidden`: answering mentions unasked, or asked again), only the entries the owner
        made public."""
        instructions = {
            str(entry["name"]): str(entry.get("instruction", ""))
            for entry in [*self.router_actions, *self.agent_actions]
        }
        hidden = outside_author is not None or private_hidden
        visible = self.memory_index.public() if hidden else self.memory_index
        return TurnRequest(user_message, self.schemas, instructions, visible.owner_values(), outside_author)
