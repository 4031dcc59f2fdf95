"""The dashboard keeps its address across a restart: the page left open in a browser (on 8080)
kept connections in TIME_WAIT for a minute after the stack stopped, the check took the port as
taken, and the next start put the dashboard on a random port the open tab did not know."""

from __future__ import annotations

import socket
from pathlib import Path

from scripts.stack_dashboard import port_is_free


def lingering_port() -> int:
    """A port nothing listens on, with a closed connection of its server side in TIME_WAIT."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn listens
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    served, _ = listener.accept()
    served.close()  # the server closes first: its side waits in TIME_WAIT
    client.recv(1)
    client.close()
    listener.close()
    return port


def test_a_port_left_in_time_wait_is_free_for_the_next_start(tmp_path: Path):
    port = lingering_port()
    assert port_is_free("127.0.0.1", port)
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    try:
        assert not port_is_free("127.0.0.1", listening.getsockname()[1])  # one in use is still taken
    finally:
        listening.close()

