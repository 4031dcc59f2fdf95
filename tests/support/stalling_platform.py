"""A platform that never gives a whole answer, in one of several ways (`mode`):

- `handshake`: for an `https://` client, a TLS record header announcing a 16 kB handshake record,
  then a byte of it every 0.3 s: a handshake that never completes;
- `chunked`: a 200 whose chunked body gains a byte every 0.2 s, forever;
- `continue`: `100 Continue` interim answers every 0.2 s, forever (clients skip each and read on);
- `redirect`: a 307 back to the same path every 0.3 s, forever;
- `flood`: a 200 declaring 20 GB, sent as fast as the socket takes it;
- `flood-chunked`: the same without a length, in 1 MB chunks.

A flood stops after `flood_limit` bytes (the connection then closes), so a client that reads it
all ends too; `sent` says how many bytes went out: what a client read before hanging up."""

from __future__ import annotations

import socket
import threading
import time

MODES = ("handshake", "chunked", "continue", "redirect", "flood", "flood-chunked")
BLOCK = b'"' + b"a" * (1 << 20) + b'",'


class StallingPlatform:
    def __init__(self, mode: str, flood_limit: int = 256 << 20) -> None:
        assert mode in MODES, mode
        self.mode = mode
        self.flood_limit = flood_limit
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.sent = 0
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StallingPlatform:
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
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                if self.mode == "handshake":
                    conn.sendall(b"\x16\x03\x03\x40\x00")  # handshake record, TLS 1.2, 16,384 bytes
                    self._every(0.3, lambda: conn.sendall(b"\x02"))
                    return
                request = _request(conn)
                if request is None:
                    return
                if self.mode == "chunked":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n")
                    self._every(0.2, lambda: conn.sendall(b"1\r\n \r\n"))
                elif self.mode == "continue":
                    self._every(0.2, lambda: conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n"))
                elif self.mode == "redirect":
                    self._redirect(conn, request)
                else:
                    self._flood(conn)
        except OSError:
            pass  # the client hung up

    def _every(self, seconds: float, send) -> None:
        while not self._stop.is_set():
            send()
            time.sleep(seconds)

    def _redirect(self, conn: socket.socket, request: bytes) -> None:
        while request is not None and not self._stop.is_set():
            time.sleep(0.3)
            path = request.split(b" ")[1]
            conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + path + b"\r\nContent-Length: 0\r\n\r\n")
            request = _request(conn)

    def _flood(self, conn: socket.socket) -> None:
        if self.mode == "flood":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20000000000\r\n\r\n[")
            chunk = BLOCK
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n1\r\n[\r\n")
            chunk = b"%x\r\n" % len(BLOCK) + BLOCK + b"\r\n"
        while not self._stop.is_set() and self.sent < self.flood_limit:
            conn.sendall(chunk)
            self.sent += len(chunk)


def _request(conn: socket.socket) -> bytes | None:
    """One request's head (its body, if any, is small and ignored); None when the client left."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data
