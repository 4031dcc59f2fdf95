"""A TCP proxy on loopback that can be cut like a network: the faults of a partition, not of a
server that dies.

`TcpProxy(port)` listens on a free loopback port (`port` attribute: `listen_port`) and forwards
every connection's bytes both ways to 127.0.0.1:`port`. `cut()` blackholes it: nothing is
forwarded any more, and nothing is closed either (a client sees its requests go unanswered until
its own socket timeout, a new connection is accepted and then hears nothing, as behind a router
that drops packets); `restore()` lets the bytes flow again, those held during the cut first (as
TCP delivers its retransmissions once a partition heals: a client that gave up on a request may
still have it run). `stop()` closes everything it opened.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from typing import cast

CHUNK = 65536


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

    def cut(self) -> None:
        """Stop forwarding, closing nothing."""
        self._flowing.clear()

    def restore(self) -> None:
        self._flowing.set()

    def stop(self) -> None:
        self._stopped.set()
        self._flowing.set()  # wake the pumps, so they see the stop
        self._acceptor.join(timeout=5)
        with self._lock:
            threads, sockets = list(self._threads), list(self._sockets)
        for thread in threads:
            thread.join(timeout=5)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()
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
            while not self._stopped.is_set():
                if not self._flowing.wait(0.2):
                    continue  # cut: the bytes wait in the kernel's buffers, unread
                for key, _ in selector.select(timeout=0.2):
                    sock = cast(socket.socket, key.fileobj)
                    try:
                        data = sock.recv(CHUNK)
                    except OSError:
                        data = b""
                    if not data:
                        return
                    while not self._flowing.is_set() and not self._stopped.is_set():
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
