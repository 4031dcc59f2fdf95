"""A TCP proxy on loopback that can be cut like a network: the faults of a partition, not of a
server that dies.

`TcpProxy(port)` listens on a free loopback port (`port` attribute: `listen_port`) and forwards
every connection's bytes both ways to 127.0.0.1:`port`. `cut()` blackholes it: nothing is
forwarded any more, and nothing is closed either (a client sees its requests go unanswered until
its own socket timeout, a new connection is accepted and then hears nothing, as behind a router
that drops packets); `restore()` lets the bytes flow again, those held during the cut first (as
TCP delivers its retransmissions once a partition heals: a client that gave up on a request may
still have it run). `stop()` closes everything it opened.

`cut(logins=...)` cuts only the connections that logged in as one of those Redis users (read from
the AUTH or HELLO the client sends, often first; a replica PINGs before it logs in), and those that
have not logged in yet: a partition that leaves some clients on one side, e.g. the routers still
reaching a primary that its replicas and Sentinel no longer see.
"""

from __future__ import annotations

import contextlib
import re
import selectors
import socket
import threading
from typing import cast

CHUNK = 65536
# The user a client logs in as, from its first command: AUTH <user> <password>, or HELLO 3 AUTH ...
LOGIN = re.compile(rb"(?:AUTH|auth)\r\n\$\d+\r\n([^\r]+)\r\n\$")


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._listener.settimeout(0.2)
        self.listen_port = int(self._listener.getsockname()[1])
        self._flowing = threading.Event()
        self._flowing.set()
        self._cut_logins: frozenset[str] | None = None  # None: every connection is cut
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self.connections = 0  # accepted so far
        self._acceptor = threading.Thread(target=self._accept, name="tcp-proxy-accept", daemon=True)
        self._acceptor.start()

    @property
    def cut_now(self) -> bool:
        return not self._flowing.is_set()

    def cut(self, logins: frozenset[str] | None = None) -> None:
        """Stop forwarding, closing nothing: every connection's bytes, or only those of connections
        that logged in as one of `logins`."""
        self._cut_logins = logins
        self._flowing.clear()

    def restore(self) -> None:
        self._cut_logins = None
        self._flowing.set()

    def _may_flow(self, login: str) -> bool:
        """`login` "": not logged in yet, cut by any cut."""
        if self._flowing.is_set() or self._stopped.is_set():
            return True
        cut = self._cut_logins
        return cut is not None and login != "" and login not in cut

    def stop(self) -> None:
        self._stopped.set()
        self._flowing.set()  # wake the pumps, so they see the stop
        self._acceptor.join(timeout=5)
        with self._lock:
            threads, sockets = list(self._threads), list(self._sockets)
        for sock in sockets:  # a pump waiting for a client's first bytes wakes up
            with contextlib.suppress(OSError):
                sock.close()
        for thread in threads:
            thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._pump, args=(client,), name="tcp-proxy-pump", daemon=True)
            with self._lock:
                self._sockets.append(client)
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _pump(self, client: socket.socket) -> None:
        """One connection: its upstream opened at once (a cut proxy still accepts and connects, it
        only forwards nothing), then bytes moved both ways whenever the proxy is not cut."""
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        with self._lock:
            self._sockets.append(upstream)
        peer = {client: upstream, upstream: client}
        selector = selectors.DefaultSelector()
        try:
            for sock in (client, upstream):
                sock.setblocking(True)
                sock.settimeout(None)
                selector.register(sock, selectors.EVENT_READ)
            # A Redis client speaks first, and logs in first (AUTH or HELLO): who it is, for a cut
            # of some logins only.
            try:
                first = client.recv(CHUNK)
            except OSError:
                return
            if not first:
                return
            found = LOGIN.search(first)
            login = found.group(1).decode("utf-8", "replace") if found else ""
            while not self._may_flow(login):
                self._flowing.wait(0.2)
            upstream.sendall(first)
            while not self._stopped.is_set():
                if not self._may_flow(login):
                    self._flowing.wait(0.2)
                    continue  # cut: the bytes wait in the kernel's buffers, unread
                for key, _ in selector.select(timeout=0.2):
                    sock = cast(socket.socket, key.fileobj)
                    try:
                        data = sock.recv(CHUNK)
                    except OSError:
                        data = b""
                    if not data:
                        return
                    if not login and sock is client:
                        found = LOGIN.search(data)
                        login = found.group(1).decode("utf-8", "replace") if found else ""
                    while not self._may_flow(login):
                        self._flowing.wait(0.2)  # cut between the read and its forwarding
                    try:
                        peer[sock].sendall(data)
                    except OSError:
                        return
        finally:
            selector.close()
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.close()
            with self._lock:
                self._sockets = [s for s in self._sockets if s not in (client, upstream)]
