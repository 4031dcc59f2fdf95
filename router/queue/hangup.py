"""Hang up a command's connections at its deadline, whatever HTTP library its platform uses.

A socket timeout bounds each read, not the request: a platform that trickles its headers one
byte every half second, or whose body never ends, holds a lane thread for as long as it likes.
So every socket a lane thread connects is noted (Python's `socket.connect` audit event, raised
by every library), and kept noted while it lives: a platform client kept by that thread for
the next commands reuses its connections there (`router.platforms.client_for`). At a command's
deadline `hang_up` shuts down the open ones of its thread, and the blocked read returns at once
with an error the platform module reports as a failed request. A socket a TLS layer took over
(the noted object is detached) is found by its file descriptor, and shut down only while that
descriptor is still connected to the same address.
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


MAX_NOTED = 64  # sockets remembered per thread (a client keeps a few; the rest are long closed)


@dataclass
class Connections:
    """The sockets one thread connected (weakly held: a closed one is simply gone), and which of
    its commands is running (`generation`): a hang-up is for that command only."""

    noted: list[tuple[weakref.ref[socket.socket], int, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0
    active: bool = False
    hung_up: bool = False

    def note(self, sock: socket.socket, address: Any) -> None:
        with self.lock:
            if not self.active:
                return
            self.noted = [*self.noted[-(MAX_NOTED - 1) :], (weakref.ref(sock), sock.fileno(), address)]
            late = self.hung_up
        if late:  # connected after the deadline: no request of this command may start now
            _shut(sock)


@dataclass(frozen=True)
class Command:
    """One command's hold on its thread's connections."""

    connections: Connections
    generation: int


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        connections = getattr(_local, "connections", None)
        if connections is not None and isinstance(args[0], socket.socket):
            connections.note(args[0], args[1])


sys.addaudithook(_audit)


@contextlib.contextmanager
def tracked() -> Iterator[Command]:
    """A command running in this thread: its sockets (and those its thread kept) can be hung up
    until the block ends."""
    connections = getattr(_local, "connections", None)
    if connections is None:
        connections = _local.connections = Connections()
    with connections.lock:
        connections.generation += 1
        connections.active, connections.hung_up = True, False
        command = Command(connections, connections.generation)
    try:
        yield command
    finally:
        with connections.lock:
            connections.active = False


def hang_up(command: Command) -> int:
    """Shut down every socket of the command's thread still open, if the command still runs
    there (called from another thread); how many were."""
    connections = command.connections
    with connections.lock:
        if connections.generation != command.generation or not connections.active:
            return 0
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
