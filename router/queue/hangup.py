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

A deadline bounds time, not bytes: over loopback a platform sends gigabytes before any deadline,
and every client library keeps the whole answer in memory. So each read of a socket (plain or
TLS, whatever library called it) counts against the running command's budget of
MAX_RECEIVED_BYTES; past it, the command's connections are hung up as at its deadline, and the
read fails as a broken connection would (`AnswerTooLarge`, an OSError), which its platform
module reports as a failed request.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_local = threading.local()


MAX_NOTED = 64  # sockets remembered per thread (a client keeps a few; the rest are long closed)
MAX_RECEIVED_BYTES = 16 * 1024 * 1024  # all of one command's answers together (a page of posts: ~100 kB)


class AnswerTooLarge(ConnectionAbortedError):
    """The running command's platform sent more than MAX_RECEIVED_BYTES; its connections are shut."""


@dataclass
class Connections:
    """The sockets one thread connected (weakly held: a closed one is simply gone), and which of
    its commands is running (`generation`): a hang-up is for that command only."""

    noted: list[tuple[weakref.ref[socket.socket], int, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0
    active: bool = False
    hung_up: bool = False
    received: int = 0  # bytes the running command read from any socket of this thread

    def note(self, sock: socket.socket, address: Any) -> None:
        with self.lock:
            if not self.active:
                return
            self.noted = [*self.noted[-(MAX_NOTED - 1) :], (weakref.ref(sock), sock.fileno(), address)]
            late = self.hung_up
        if late:  # connected after the deadline: no request of this command may start now
            _shut(sock)

    def count(self, size: int) -> None:
        """`size` more bytes read by the running command (in its own thread)."""
        self.received += size
        if self.received > MAX_RECEIVED_BYTES:
            with self.lock:
                self.hung_up = True
                noted = list(self.noted)
            _shut_all(noted)
            megabytes = MAX_RECEIVED_BYTES // (1024 * 1024)
            raise AnswerTooLarge(f"the platform's answer passed {megabytes} MB; hung up")


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


def _counting(read: Any) -> Any:
    def counted(self: socket.socket, *args: Any, **kwargs: Any) -> Any:
        got = read(self, *args, **kwargs)
        connections = getattr(_local, "connections", None)
        if connections is not None and connections.active:
            connections.count(got if isinstance(got, int) else len(got))
        return got

    return counted


# Every read of a socket, whichever library makes it: plain sockets and TLS ones (whose own reads
# do not go through the plain socket's).
for _kind in (socket.socket, ssl.SSLSocket):
    for _read in ("recv", "recv_into"):
        setattr(_kind, _read, _counting(getattr(_kind, _read)))


@contextlib.contextmanager
def tracked() -> Iterator[Command]:
    """A command running in this thread: its sockets (and those its thread kept) can be hung up
    until the block ends."""
    connections = getattr(_local, "connections", None)
    if connections is None:
        connections = _local.connections = Connections()
    with connections.lock:
        connections.generation += 1
        connections.active, connections.hung_up, connections.received = True, False, 0
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
    return _shut_all(noted)


def _shut_all(noted: list[tuple[weakref.ref[socket.socket], int, Any]]) -> int:
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
