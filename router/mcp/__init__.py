"""SafeClaw's router for any MCP client: `python -m router.mcp` (or `./safeclaw mcp`), over stdio.

The MCP server is a second mind's hands, shaped like the agent's: it holds no platform
credential and decides nothing. Its tools are the router's skills (`tools`: names, descriptions
and JSON schemas from the registry, with read-only / destructive / idempotent hints); a call is
a command sent to the router (`links`):
- with REDIS_URL (the `mcp` ACL user), through its own queue (the router runs what comes from it
  under the MCP origin only, whatever it claims), so every call passes the router's own
  policy: kill switch, approvals, rate limits, quotas, pacing, duplicate guard, circuit breaker,
  secret_in_text, and lands in its audit log under the origin `mcp`;
- without, through the one-shot tool (`python -m router.social`) in a child process that loads
  the credentials the server never sees, with its bounds in the embedded store.
What comes back (`results`) is sanitised and flagged once more, redacted, fenced and marked as
untrusted content for the client.
"""
