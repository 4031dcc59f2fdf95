"""`python -m router.mcp [--read-only] [--timeout S] [--http HOST:PORT]`: SafeClaw's router as an MCP
server, over stdio (the default) or over Streamable HTTP behind a bearer token (`--http`, the
token in MCP_HTTP_TOKEN or the file `--token-file` names).

REDIS_URL (the `mcp` user's login) set: calls go through the router's queue. Not set: each call
runs the one-shot tool in a child process (bounds in the embedded store). The server itself
refuses to start holding a platform credential: those belong in the router's environment.
Log lines go to stderr; on stdio, stdout carries the protocol only.
"""

from __future__ import annotations

import sys

from protocol.ctrl_c import interrupted, leave_on_ctrl_c, python_takes_ctrl_c

if __name__ == "__main__":
    leave_on_ctrl_c()  # a Ctrl-C while the server starts: quietly, status 130

import argparse
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES
from protocol.keys import MCP_LOGIN, Keys
from router.mcp.http import MIN_TOKEN_CHARS, serve_http
from router.mcp.links import Link, OneShotLink, QueueLink
from router.mcp.server import RouterTools, serve_stdio
from router.registry import discover_skills

DEFAULT_TIMEOUT = 30.0
log = logging.getLogger("safeclaw.router.mcp")


class StartError(Exception):
    """The server cannot start as asked; the message says why and what to do."""


def held_credentials(env: Mapping[str, str]) -> list[str]:
    names = {name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names}
    return sorted(name for name in names if env.get(name))


def make_link(env: Mapping[str, str], timeout: float) -> Link:
    if env.get("REDIS_URL", "").strip():
        keys = Keys.from_env(env)
        return QueueLink(env["REDIS_URL"].strip(), keys.response_prefix_of(MCP_LOGIN),
                         keys.command_queue_of(MCP_LOGIN), timeout,
                         env.get("REDIS_ACCEPT_EVICTION", "").strip())
    return OneShotLink(env, timeout)


def http_address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise StartError(f"--http {value!r} is not HOST:PORT (e.g. 127.0.0.1:8765)")
    return host.strip("[]"), int(port)


def http_token(env: Mapping[str, str], token_file: Path | None) -> str:
    try:
        token = (
            token_file.read_text(encoding="utf-8").strip() if token_file else env.get("MCP_HTTP_TOKEN", "")
        )
    except OSError as exc:
        raise StartError(f"cannot read the token file {token_file}: {exc.strerror}") from None
    if len(token.strip()) < MIN_TOKEN_CHARS:
        raise StartError(
            f"--http needs a bearer token of at least {MIN_TOKEN_CHARS} characters in "
            "MCP_HTTP_TOKEN or --token-file"
        )
    return token.strip()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./safeclaw mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--read-only", action="store_true", help="offer only the tools that change nothing")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds a call waits for the router (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP here instead of stdio")
    parser.add_argument("--token-file", type=Path, help="the HTTP bearer token (else MCP_HTTP_TOKEN)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        held = held_credentials(env)
        if held:
            raise StartError(
                f"its environment holds platform credentials ({', '.join(held)}); they belong "
                "in the router's environment (router/.env), never in an MCP client's"
            )
        if not 0 < args.timeout <= 3600:
            raise StartError("--timeout must be above 0 and at most 3600 seconds")
        address = http_address(args.http) if args.http else None
        token = http_token(env, args.token_file) if address else ""
    except StartError as exc:
        print(f"safeclaw mcp: refusing to start: {exc}", file=sys.stderr)
        return 2
    tools = RouterTools(discover_skills(), make_link(env, args.timeout), args.read_only)
    python_takes_ctrl_c()  # the server's event loop stops on it
    try:
        if address is None:
            anyio.run(serve_stdio, tools)
        else:
            anyio.run(serve_http, tools, address[0], address[1], token)
    except KeyboardInterrupt:
        return interrupted()
    return 0


if __name__ == "__main__":
    sys.exit(main())
