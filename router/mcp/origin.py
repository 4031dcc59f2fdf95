"""Whose words an MCP call carries: the owner's path `mcp`, with unknown reading.

An MCP client is a mind the router cannot see into: whatever it read (pages, mail, other
people's posts) may be in its words, and nothing it says about itself can be checked. So its
commands are an owner's turn that read outside text: reads as usual, and a public write waits
for the owner's approval unless the router is told otherwise (ROUTER_APPROVE_TAINTED_WRITES=false).
"""

from __future__ import annotations

from protocol.origin import MCP_VIA, OWNER, Origin

__all__ = ["MCP_ORIGIN", "MCP_VIA", "UNKNOWN_READING"]
UNKNOWN_READING = "an MCP client, whose reading SafeClaw cannot see"
MCP_ORIGIN = Origin(OWNER, MCP_VIA, taint=(UNKNOWN_READING,))
