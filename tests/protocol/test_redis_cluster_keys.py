"""A move to Redis Cluster is a change of REDIS_URL: every key SafeClaw names hashes to one slot,
and `redis+cluster://` URLs are read as the nodes to find the cluster from."""

from __future__ import annotations

import inspect

import pytest
from redis.crc import key_slot

from protocol.keys import SENDING_LOGINS, Keys
from protocol.redis_address import AddressError, parse_address


def every_key(keys: Keys) -> list[str]:
    names = []
    for name, member in inspect.getmembers(type(keys)):
        if name.startswith("_") or name in ("from_env", "untagged"):
            continue
        if isinstance(member, property):
            names.append(getattr(keys, name))
        elif callable(member):
            takes = len(inspect.signature(member).parameters) - 1
            args = {1: ("c1",), 2: (SENDING_LOGINS[-1], "c1")}[takes]
            names.append(getattr(keys, name)(*args))
    names += [keys.command_queue, keys.response_prefix, keys.prefix]
    names += [keys.command_queue_of(login) for login in SENDING_LOGINS]
    names += [keys.processing_of(login, "r1") for login in SENDING_LOGINS]
    return names


def test_every_key_shares_one_cluster_slot():
    names = every_key(Keys())
    assert len(names) > 25
    assert {key_slot(name.encode()) for name in names} == {key_slot(b"{safeclaw}")}, names


def test_a_queue_name_without_the_tag_is_named():
    assert Keys().untagged() == []
    assert Keys(command_queue="q").untagged() == ["q"]


def test_a_cluster_url_names_its_nodes_login_and_tls():
    address = parse_address("rediss+cluster://router:p%40ss@10.0.0.1:7000,[::1]:7001,node3?ssl_cert_reqs=none")
    assert address.is_cluster and not address.is_sentinel and address.tls
    assert address.cluster_nodes == (("10.0.0.1", 7000), ("::1", 7001), ("node3", 6379))
    assert address.username == "router" and address.options["password"] == "p@ss"
    assert address.options["ssl_cert_reqs"] == "none"
    assert "p@ss" not in address.where and address.where.startswith("Redis Cluster 10.0.0.1:7000")


@pytest.mark.parametrize("url", ["redis+cluster://", "redis+cluster://u:p@/", "redis+cluster://h:1/3",
                                 "redis+cluster://h:port"])
def test_a_cluster_url_that_cannot_be_used_is_refused(url):
    with pytest.raises(AddressError):
        parse_address(url)


def test_a_router_on_a_cluster_refuses_a_queue_name_without_the_tag():
    from router.config.settings import RouterSettings
    from router.errors import ConfigError

    url = "redis+cluster://router:pw@127.0.0.1:7000"
    assert RouterSettings.from_env({"REDIS_URL": url}).keys.command_queue.startswith("{safeclaw}")
    with pytest.raises(ConfigError, match="must start with {safeclaw}"):
        RouterSettings.from_env({"REDIS_URL": url, "COMMAND_QUEUE": "q"})
    assert RouterSettings.from_env({"REDIS_URL": "redis://router:pw@h:1/0", "COMMAND_QUEUE": "q"})
