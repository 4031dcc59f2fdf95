"""Turn requests built on the shipped action catalogue, as the agent builds them."""

from agent.llm.turn import TurnRequest
from agent.workspace.folder import SHIPPED_WORKSPACE, Workspace


def catalogue():
    ws = Workspace(SHIPPED_WORKSPACE)
    entries = ws.read_catalogue("router_actions.json") + ws.read_catalogue("agent_action.json")
    return {e["name"]: e["params"] for e in entries}, {e["name"]: e.get("instruction", "") for e in entries}


def request(message, memory=None, outside=None):
    schemas, instructions = catalogue()
    return TurnRequest(message, schemas, instructions, memory or {}, outside)
