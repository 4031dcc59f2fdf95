"""Hosts as a reader takes them in (`protocol.link_hosts`); the spellings of a host are tested with the
explainer's marking (tests/agent/explain/test_outside_links.py)."""

from protocol.link_hosts import foreign_hosts, link_keys


def test_an_ipv4_address_written_bare_is_a_host_and_a_version_number_is_not():
    assert link_keys("log in at 203.0.113.5/login") == ["203.0.113.5"]
    assert link_keys("see 203.0.113.5:8443 now") == ["203.0.113.5"]
    assert link_keys("open http://198.51.100.7/pay") == ["198.51.100.7"]
    assert link_keys("version 1.2.3.4 is out; 300.1.1.1 is no address") == []
    assert foreign_hosts("pay at 203.0.113.5", ["my router is 192.168.1.10"]) == ["203.0.113.5"]
