"""`python -m router.mcp [--read-only] [--timeout S]`: SafeClaw's router as an MCP server over stdio.

REDIS_URL (the `mcp` user's login) set: calls go through the router's queue. Not set: each call
runs the one-shot tool in a child process (bounds in the embedded store). The server itself
refuses to start holding a platform credential: those belong in the router's environment.
Log lines go to stderr; stdout carries the protocol only.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Mapping

import anyio

from protocol import PLATFORM_CREDENTIAL_VARIABLES, Keys
from router.mcp.links import Link, OneShotLink, QueueLink
from router.mcp.server import RouterTools, serve_stdio
from router.registry import discover_skills

DEFAULT_TIMEOUT = 30.0
log = logging.getLogger("safeclaw.router.mcp")


def held_credentials(env: Mapping[str, str]) -> list[str]:
    names = {name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names}
    return sorted(name for name in names if env.get(name))


def make_link(env: Mapping[str, str], timeout: float) -> Link:
    if env.get("REDIS_URL", "").strip():
        keys = Keys.from_env(env)
        return QueueLink(env["REDIS_URL"].strip(), keys.response_prefix, keys.command_queue, timeout)
    return OneShotLink(env, timeout)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m router.mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--read-only", action="store_true", help="offer only the tools that change nothing")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds a call waits for the router (default {DEFAULT_TIMEOUT:g})",
    )
    args = parser.parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    held = held_credentials(env)
    if held:
        print(
            "safeclaw mcp: refusing to start: its environment holds platform credentials "
            f"({', '.join(held)}); "
            "they belong in the router's environment (router/.env), never in an MCP client's",
            file=sys.stderr,
        )
        return 2
    if not 0 < args.timeout <= 3600:
        print("safeclaw mcp: --timeout must be above 0 and at most 3600 seconds", file=sys.stderr)
        return 2
    tools = RouterTools(discover_skills(), make_link(env, args.timeout), args.read_only)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, tools)
    return 0


if __name__ == "__main__":
    sys.exit(main())
