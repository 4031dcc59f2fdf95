"""Ports another program holds, or held a moment ago. The dashboard keeps its address across a
restart: the page left open in a browser (on 8080) kept connections in TIME_WAIT for a minute
after the stack stopped, the check took the port as taken, and the next start put the dashboard
on a random port the open tab did not know. A port really in use is said in words."""

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



def test_a_set_port_in_use_is_said_plainly_and_the_rest_runs(tmp_path: Path):
    """DASHBOARD_PORT on a port another program holds: "the dashboard did not start; see
    logs/dashboard.console.log", where uvicorn's Errno 98 explained it."""
    from tests.stack.stack_helpers import FINAL_REPLY, run_stack, stack_env

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        env = {**stack_env(tmp_path, [FINAL_REPLY]), "DASHBOARD_PORT": str(port)}
        run = run_stack(tmp_path, env, "hello\n")
    finally:
        taken.close()
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == FINAL_REPLY  # the console ran without its dashboard
    assert f"port {port} (DASHBOARD_PORT) is in use by another program" in run.stderr, run.stderr
    assert "did not start" not in run.stderr and "dashboard" not in run.pids


def test_redis_losing_its_port_to_another_program_is_said_in_words(tmp_path: Path, monkeypatch):
    """The private Redis's port is chosen free, then taken by redis-server a moment later; another
    program may take it in between. That was "redis-server exited with code 1" and its log."""
    import scripts.stack_redis as stack_redis
    from protocol.keys import Keys
    from scripts.stack_processes import StackError

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    monkeypatch.setattr(stack_redis, "free_port", lambda: port)
    private = stack_redis.PrivateRedis(tmp_path / "run", Keys())
    try:
        private.start()
        raise AssertionError("redis-server started on a port in use")
    except StackError as exc:
        message = str(exc)
    finally:
        taken.close()
        if private.process is not None and private.process.poll() is None:
            private.process.kill()
            private.process.wait()
    assert message.startswith(f"the private Redis could not listen on 127.0.0.1:{port}: another program "
                              "took the port as it started; run ./safeclaw again"), message
    assert "\n" not in message
