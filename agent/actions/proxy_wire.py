"""The wire side of the browser's guard proxy: request targets parsed, the head rewritten for the
origin server, and bytes piped both ways until the answer ends."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

HOP_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "upgrade"}


class Refused(Exception):
    """A request the guard does not let out; the message says why."""


def split_host_port(target: str, default_port: int) -> tuple[str, int]:
    """ "host:port" or "[v6]:port" → (host, port); ValueError when malformed."""
    parts = urlsplit(f"//{target}")
    if not parts.hostname:
        raise ValueError(f"no host in {target!r}")
    return parts.hostname, parts.port or default_port


def split_absolute(target: str) -> tuple[str, int, str]:
    """An absolute-form http:// request target → (host, port, origin-form path)."""
    parts = urlsplit(target)
    if parts.scheme.lower() != "http" or not parts.hostname:
        raise Refused(f"only absolute http:// targets are proxied, not {target[:80]!r}")
    if parts.username is not None or parts.password is not None:
        raise Refused("URLs with a user name or password in them are refused")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, parts.port or 80, path


def header_name(line: str) -> str:
    return line.split(":", 1)[0].strip().lower()


def rewritten_head(method: str, path: str, version: str, header_lines: list[str]) -> bytes:
    """The request for the origin server: origin-form target, no proxy headers, one request only."""
    kept = [line for line in header_lines if line and header_name(line) not in HOP_HEADERS]
    lines = [f"{method} {path} {version or 'HTTP/1.1'}", *kept, "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1")


async def pipe_both_ways(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
) -> None:
    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                if sink.can_write_eof():
                    sink.write_eof()

    # The answer ends the exchange: a plain-HTTP client may keep its side open for another request.
    upload = asyncio.ensure_future(pipe(client_reader, upstream_writer))
    try:
        await pipe(upstream_reader, client_writer)
    finally:
        upload.cancel()
        with contextlib.suppress(BaseException):
            await upload
        upstream_writer.close()
        with contextlib.suppress(Exception):
            await upstream_writer.wait_closed()
