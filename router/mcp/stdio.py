"""stdin and stdout as asynchronous line streams for the SDK's `stdio_server`, without threads.

The SDK's own stdio streams read and write through a worker thread for every line (two to three
thread hops a call). Here the wire is read and written by the event loop (asyncio's pipe
transports) and handed to `stdio_server(stdin=..., stdout=...)`, which accepts any such streams.
As the SDK does for its own, the process's fd 0 and fd 1 are pointed elsewhere while serving
(the null device, and stderr), so nothing else in the process, nor a child, can read a request or
write into the protocol; the wire lives on private copies of the two descriptors. When stdin or
stdout is not a pipe, a socket or a terminal (a regular file), the SDK's own streams are used.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.stdio import stdio_server

from router.mcp import jsonrpc_lines

STREAMABLE = (stat.S_ISFIFO, stat.S_ISSOCK, stat.S_ISCHR)
MAX_LINE_BYTES = 64 * 1024 * 1024  # one JSON-RPC message


class LineReader:
    """`async for line in reader`: the JSON-RPC messages of the wire, as text. A line that is no
    message is answered on `writer` here and not passed on (`router.mcp.jsonrpc_lines`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self.reader.readline()
            if not line:
                raise StopAsyncIteration
            message, error = jsonrpc_lines.checked(line)
            if message is not None:
                return message
            if error is not None:
                self.writer.write(error)
                await self.writer.drain()


class LineWriter:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _streamable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return any(test(mode) for test in STREAMABLE)


@contextlib.contextmanager
def _claimed_std_fds() -> Any:
    """Private copies of fd 0 and 1 for the wire; fd 0 reads nothing and fd 1 writes to stderr
    meanwhile. Put back on exit."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.close(devnull)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


@contextlib.asynccontextmanager
async def serve_streams() -> AsyncIterator[Any]:
    """The SDK's `(read_stream, write_stream)` for this process's stdio."""
    if not (_streamable(0) and _streamable(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    with _claimed_std_fds() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        try:
            async with stdio_server(stdin=LineReader(reader, writer), stdout=LineWriter(writer)) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            read_transport.close()
            write_transport.close()
