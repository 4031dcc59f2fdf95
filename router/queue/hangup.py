"""Hang up a command's connections at its deadline, whatever HTTP library its platform uses.

A socket timeout bounds each read, not the request: a platform that trickles its headers one
byte every half second, or whose body never ends, holds a lane thread for as long as it likes.
So while a command runs, every socket its thread connects is noted (Python's `socket.connect`
audit event, raised by every library); at the command's deadline `hang_up` shuts them down,
and the blocked read returns at once with an error the platform module reports as a failed
request. A socket a TLS layer took over (the noted object is detached) is found by its file
descriptor, and shut down only while that descriptor is still connected to the same address.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_local = threading.local()


@dataclass
class Connections:
    """The sockets one command's thread connected (weakly held: a closed one is simply gone)."""

    noted: list[tuple[weakref.ref[socket.socket], int, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hung_up: bool = False

    def note(self, sock: socket.socket, address: Any) -> None:
        with self.lock:
            self.noted.append((weakref.ref(sock), sock.fileno(), address))
            late = self.hung_up
        if late:  # connected after the deadline: no request of this command may start now
            _shut(sock)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        connections = getattr(_local, "connections", None)
        if connections is not None and isinstance(args[0], socket.socket):
            connections.note(args[0], args[1])


sys.addaudithook(_audit)


@contextlib.contextmanager
def tracked() -> Iterator[Connections]:
    """Note the sockets this thread connects until the block ends."""
    connections = Connections()
    _local.connections = connections
    try:
        yield connections
    finally:
        _local.connections = None


def hang_up(connections: Connections) -> int:
    """Shut down every noted socket still open (from any thread); how many were."""
    with connections.lock:
        connections.hung_up = True
        noted = list(connections.noted)
    done = 0
    for ref, fd, address in noted:
        sock = ref()
        if sock is not None and sock.fileno() != -1:
            done += _shut(sock)
        elif fd >= 0:
            done += _shut_descriptor(fd, address)
    return done


def _shut(sock: socket.socket) -> int:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        return 0
    return 1


def _shut_descriptor(fd: int, address: Any) -> int:
    """The descriptor a TLS socket took over, if it is still connected where the command connected."""
    try:
        copy = os.dup(fd)
    except OSError:
        return 0
    try:
        sock = socket.socket(fileno=copy)
    except OSError:
        os.close(copy)
        return 0
    try:
        peer = sock.getpeername()
        if not isinstance(address, tuple) or tuple(peer[:2]) != tuple(address[:2]):
            return 0
        return _shut(sock)
    except OSError:
        return 0
    finally:
        sock.close()  # closes the copy only; the shutdown reached the connection itself
