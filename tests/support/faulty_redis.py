"""A TCP proxy in front of a real redis-server that answers some commands with a fault instead of
Redis's own reply: an error code (MISCONF, NOREPLICAS, READONLY, LOADING, OOM, BUSY, NOSCRIPT, ...),
a reply of another type (an integer, a status, nil, an empty array), or the connection reset
partway through a pipeline's replies. The command itself reached Redis and took effect: as with
a real fault, the client cannot tell whether it did.

Which replies: `chance` of each one (seeded), for commands not in `SPARED` (the login), and only
those named in `only` when it is given, while `on`. `faults` counts what was injected, by kind."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
from collections import Counter, deque

ERRORS = {
    "MISCONF": b"-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk\r\n",
    "NOREPLICAS": b"-NOREPLICAS Not enough good replicas to write.\r\n",
    "READONLY": b"-READONLY You can't write against a read only replica.\r\n",
    "LOADING": b"-LOADING Redis is loading the dataset in memory\r\n",
    "OOM": b"-OOM command not allowed when used memory > 'maxmemory'.\r\n",
    "BUSY": b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.\r\n",
    "NOSCRIPT": b"-NOSCRIPT No matching script. Please use EVAL.\r\n",
    "MASTERDOWN": b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n",
    "TRYAGAIN": b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
    "ERR": b"-ERR something the proxy made up\r\n",
}
WRONG_TYPES = {"int": b":7\r\n", "status": b"+OK\r\n", "nil": b"$-1\r\n", "empty": b"*0\r\n", "bulk": b"$3\r\nabc\r\n"}
KINDS = (*ERRORS, *(f"type:{name}" for name in WRONG_TYPES), "reset")
SPARED = frozenset({b"AUTH", b"HELLO", b"HELLO 3", b"CLIENT", b"SELECT", b"PING"})


class Incomplete(Exception):
    pass


def frame_end(data: bytes | bytearray, at: int = 0) -> int:
    """Where the RESP frame starting at `at` ends; Incomplete when it is not all there yet."""
    line_end = data.find(b"\r\n", at)
    if line_end < 0:
        raise Incomplete
    kind, head = data[at : at + 1], data[at + 1 : line_end]
    after = line_end + 2
    if kind in (b"+", b"-", b":", b",", b"#", b"_", b"("):
        return after
    if kind in (b"$", b"!", b"=", b"|"):
        size = int(head)
        if size < 0:
            return after
        if len(data) < after + size + 2:
            raise Incomplete
        return after + size + 2
    if kind in (b"*", b"%", b"~", b">"):
        count = int(head) * (2 if kind == b"%" else 1)
        for _ in range(max(count, 0)):
            after = frame_end(data, after)
        return after
    raise ValueError(f"not RESP: {bytes(data[at:at + 20])!r}")


class FaultyRedis:
    def __init__(self, target_port: int, chance: float = 0.05, seed: int = 7, kinds: tuple[str, ...] = KINDS,
                 only: frozenset[bytes] | None = None) -> None:
        self.target_port = target_port
        self.only = only
        self.chance = chance
        self.kinds = kinds
        self.on = False
        self.faults: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._stop = threading.Event()

    def reseed(self, seed: int) -> None:
        with self._lock:
            self._random = random.Random(seed)

    def url(self, user: str, password: str) -> str:
        return f"redis://{user}:{password}@127.0.0.1:{self.port}/0"

    def start(self) -> FaultyRedis:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            sent: deque[bytes] = deque()  # the names of the commands awaiting their replies, and HELLO's version
            threading.Thread(target=self._requests, args=(client, server, sent), daemon=True).start()
            threading.Thread(target=self._replies, args=(server, client, sent), daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket, sent: deque[bytes]) -> None:
        buffer = bytearray()
        try:
            while chunk := client.recv(65536):
                buffer += chunk
                while buffer:
                    try:
                        end = frame_end(buffer)
                    except Incomplete:
                        break
                    words = bytes(buffer[:end]).split(b"\r\n")
                    sent.append(words[2].upper() + (b" 3" if words[2].upper() == b"HELLO" and words[4] == b"3" else b""))
                    server.sendall(bytes(buffer[:end]))
                    del buffer[:end]
        except (OSError, ValueError):
            pass
        _close(client, server)

    def _replies(self, server: socket.socket, client: socket.socket, sent: deque[bytes]) -> None:
        buffer = bytearray()
        nil = WRONG_TYPES["nil"]
        try:
            while chunk := server.recv(65536):
                buffer += chunk
                out = bytearray()
                while buffer:
                    try:
                        end = frame_end(buffer)
                    except Incomplete:
                        break
                    reply = bytes(buffer[:end])
                    del buffer[:end]
                    name = sent.popleft() if sent else b""
                    if name == b"HELLO 3":
                        nil = b"_\r\n"  # RESP3's null; `$-1` is RESP2's
                    fault = self._fault(name)
                    if fault == "reset":
                        client.sendall(bytes(out))  # the replies before it arrive; the rest never do
                        raise OSError("reset by the proxy")
                    if fault is None:
                        out += reply
                    else:
                        out += nil if fault == "type:nil" else ERRORS.get(fault) or WRONG_TYPES[fault[5:]]
                client.sendall(bytes(out))
        except (OSError, ValueError):
            pass
        _close(client, server)

    def _fault(self, name: bytes) -> str | None:
        if not self.on or name in SPARED or (self.only is not None and name not in self.only):
            return None
        with self._lock:
            if self._random.random() >= self.chance:
                return None
            kind = self._random.choice(self.kinds)
            self.faults[kind] += 1
            return kind


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
