"""The tests' own redis-server: parallel test workers choose ports independently, so a port can be
taken between choosing it and binding it; a first start then moves on, a restart keeps its port.
A test's server is clean: what an earlier test left (keys, open connections) is gone."""

from __future__ import annotations

import socket

import pytest
import redis

from tests.support.redis_server import PortTaken, RedisServer, clean


def occupied_port() -> socket.socket:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


def test_a_first_start_on_a_taken_port_moves_to_a_free_one():
    server = RedisServer(persistent=False)
    with occupied_port() as holder:
        taken = holder.getsockname()[1]
        server.port = taken
        server._write_config()
        try:
            server.start()
            assert server.port != taken
            client = server.admin_client()
            assert client.ping()
            client.close()
        finally:
            server.cleanup()


def test_a_restart_on_a_taken_port_fails_rather_than_moving():
    server = RedisServer(persistent=False)
    try:
        server.start()
        port = server.port
        server.stop()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
            holder.bind(("127.0.0.1", port))
            holder.listen()
            with pytest.raises(PortTaken):
                server.start()
        assert server.port == port
    finally:
        server.cleanup()


def test_cleaning_closes_every_earlier_connection_and_empties_the_data(redis_server):
    earlier = redis.Redis.from_url(redis_server.agent_url, decode_responses=True)
    listening = redis.Redis.from_url(redis_server.agent_url).pubsub()
    earlier.ping()
    listening.subscribe("anything")
    admin = redis_server.admin_client()
    admin.set("left:over", "1")
    try:
        assert {c["user"] for c in admin.client_list()} >= {"agent"}
        clean(redis_server)
        assert [c for c in admin.client_list() if c["user"] != "admin"] == []
        assert admin.dbsize() == 0
    finally:
        listening.close()
        earlier.close()
        admin.close()
