"""A platform that never finishes answering: it takes the request, then sends its answer one byte
every `interval` seconds forever, in its headers (`mode="headers"`) or in a body that never ends
(`mode="body"`). It records each connection, and when the client hung up on it."""

from __future__ import annotations

import select
import socket
import threading
import time


class TrickleServer:
    def __init__(self, mode: str = "headers", interval: float = 0.5) -> None:
        self.mode = mode
        self.interval = interval
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.hung_up = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> TrickleServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                request += chunk
            if self.mode == "body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{")
                answer = b" " * 100_000_000
            else:
                answer = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100_000_000
            for byte in answer:
                if self._stop.is_set():
                    return
                readable, _, _ = select.select([conn], [], [], self.interval)
                try:
                    if readable and not conn.recv(1):  # the client hung up
                        raise ConnectionResetError
                    conn.sendall(bytes([byte]))
                except OSError:  # hung up, closed or reset (a kept client closed at the router's stop)
                    with self._lock:
                        self.hung_up += 1
                    return
            time.sleep(0)
