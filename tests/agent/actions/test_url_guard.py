"""Which URLs the browser may open: refusals are ActionErrors that say why."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from agent.actions import ActionError
from agent.actions.browser_vision import browser_vision
from agent.actions.url_guard import check_url, is_public_address, parse_ip_literal

PUBLIC_V4 = "93.184.215.14"


@pytest.fixture
def fake_dns(monkeypatch):
    """Names resolve to whatever the test says (no network); unknown names fail like real DNS."""
    table: dict[str, list[str]] = {}

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in table[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


@pytest.mark.parametrize("url, reason", [
    ("file:///etc/passwd", "not file:"),
    ("data:text/html,<h1>hi</h1>", "not data:"),
    ("chrome://settings", "not chrome:"),
    ("javascript:alert(1)", "not javascript:"),
    ("about:blank", "not about:"),
    ("view-source:https://example.org/", "not view-source:"),
    ("ftp://example.org/", "not ftp:"),
    ("//example.org/", "without a scheme"),
    ("example.org", "without a scheme"),
    ("https://user:pw@example.org/", "user name or password"),
    ("https://user@example.org/", "user name or password"),
    ("https://exa mple.org/", "spaces or control"),
    ("http:///path", "no host"),
    ("http://example.org:99999/", "malformed"),
    ("", "non-empty string"),
    (None, "non-empty string"),
    ("https://" + "a" * 3000 + ".org/", "too long"),
])
def test_refused_urls_say_why(url, reason):
    with pytest.raises(ActionError, match=reason):
        check_url(url, allow_private=True)


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://127.1/", "http://0x7f000001/", "http://2130706433/",
    "http://0177.0.0.1/", "http://017700000001/", "http://0.0.0.0/", "http://[::1]/",
    "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::]/", "http://10.1.2.3/",
    "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/", "http://[fc00::1]/", "http://100.64.0.1/", "http://224.0.0.1/",
    "http://[ff02::1]/", "http://240.0.0.1/", "http://255.255.255.255/", "http://[2002:7f00:1::]/",
    "HTTP://127.0.0.1./",
])
def test_private_and_special_addresses_are_refused_by_default(url):
    with pytest.raises(ActionError, match=r"link-local or reserved.*allow_private_addresses"):
        check_url(url)


def test_private_addresses_pass_when_config_allows_them():
    assert check_url("http://127.0.0.1:8080/x", allow_private=True).addresses == ("127.0.0.1",)
    assert check_url("http://0x7f000001/", allow_private=True).addresses == ("127.0.0.1",)


def test_every_resolved_address_is_checked(fake_dns):
    fake_dns["mixed.example"] = [PUBLIC_V4, "127.0.0.1"]
    fake_dns["v6-loop.example"] = ["2606:4700::1111", "::1"]
    fake_dns["mapped.example"] = ["::ffff:10.0.0.1"]
    fake_dns["public.example"] = [PUBLIC_V4, "2606:4700::1111"]

    for host in ("mixed.example", "v6-loop.example", "mapped.example"):
        with pytest.raises(ActionError, match="refused"):
            check_url(f"https://{host}/")
    checked = check_url("https://public.example/page?q=1")
    assert checked.host == "public.example" and checked.addresses == (PUBLIC_V4, "2606:4700::1111")


def test_a_name_that_does_not_resolve_is_a_clear_error(fake_dns):
    with pytest.raises(ActionError, match=r"cannot reach 'nowhere\.invalid': its name could not be looked up"):
        check_url("https://nowhere.invalid/")


def test_unicode_host_names_are_checked_in_their_idna_form(fake_dns):
    fake_dns["xn--bcher-kva.example"] = ["127.0.0.1"]
    with pytest.raises(ActionError, match="refused"):
        check_url("https://bücher.example/")


def test_public_address_classification():
    assert is_public_address(ipaddress.ip_address(PUBLIC_V4))
    assert is_public_address(ipaddress.ip_address("::ffff:" + PUBLIC_V4))
    assert not is_public_address(ipaddress.ip_address("::ffff:192.168.0.1"))
    assert parse_ip_literal("0x7f.1") == ipaddress.ip_address("127.0.0.1")
    assert parse_ip_literal("example.org") is None


@pytest.mark.parametrize("url", ["file:///etc/passwd", "data:text/html,hi", "chrome://settings",
                                 "http://127.0.0.1/", "http://[::1]/", "http://0x7f000001/"])
def test_the_action_refuses_before_starting_any_browser(url, make_ctx, monkeypatch):
    from agent.actions import browser_vision as module

    def no_browser(*args, **kwargs):
        raise AssertionError("a browser was started for a refused URL")

    monkeypatch.setattr(module, "open_driver", no_browser)
    ctx = make_ctx({"allow_private_addresses": False, "page_load_timeout": 5, "total_timeout": 10})
    with pytest.raises(ActionError, match=r"only http|refused"):
        browser_vision({"url": url}, ctx)


def test_every_address_of_this_machine_is_refused_as_its_own():
    """Issue 19, item 11: the machine's own public address reached a service on 0.0.0.0."""
    from agent.actions.url_guard import own_addresses

    own = own_addresses()
    assert ipaddress.ip_address("127.0.0.1") in own
    for address in own:
        shown = f"[{address}]" if address.version == 6 else str(address)
        with pytest.raises(ActionError, match="own address|loopback, private"):
            check_url(f"http://{shown}:8080/")


def test_a_public_address_of_this_machine_is_refused_and_another_one_passes(monkeypatch):
    import agent.actions.url_guard as url_guard

    mine = ipaddress.ip_address("93.184.216.34")
    monkeypatch.setattr(url_guard, "own_addresses", lambda: frozenset({mine}))
    with pytest.raises(ActionError, match="this machine's own address"):
        check_url("http://93.184.216.34:8080/")
    with pytest.raises(ActionError, match="this machine's own address"):
        check_url("http://[::ffff:93.184.216.34]:8080/")
    assert check_url("http://93.184.216.35/").addresses == ("93.184.216.35",)


def test_no_network_is_told_apart_from_a_wrong_name(fake_dns, monkeypatch):
    """Offline, /browse said "cannot resolve ... ([Errno -3] Temporary failure in name
    resolution); check the URL": the URL was right, the machine had no network."""
    with pytest.raises(ActionError) as wrong:
        check_url("https://nowhere.invalid/")
    assert "check the URL" not in str(wrong.value) and "Errno" not in str(wrong.value)
    assert "cannot reach 'nowhere.invalid'" in str(wrong.value)

    def offline(host, port, *args, **kwargs):
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    with pytest.raises(ActionError) as no_network:
        check_url("https://example.org/")
    message = str(no_network.value)
    assert "'example.org'" in message and "is this machine online?" in message, message
    assert "check the URL" not in message and "Errno" not in message, message


def test_a_real_name_that_does_not_resolve_says_it_cannot_be_reached_not_that_the_url_is_wrong():
    """Offline, `/browse https://example.com` said "check the URL": offline every name fails to
    resolve, so a name that does not resolve (here a real lookup of a .invalid name, which never
    does) says the machine or the site cannot be reached."""
    with pytest.raises(ActionError) as unknown:
        check_url("https://nowhere.invalid/")
    message = str(unknown.value)
    assert message.startswith("cannot reach 'nowhere.invalid': "), message
    assert "may be offline" in message or "has no network connection" in message, message
    assert "check the URL" not in message and "Errno" not in message, message


def test_only_a_malformed_address_is_told_to_check_the_url():
    with pytest.raises(ActionError, match=r"^'a\.\.b' is not a valid host name; check the URL$"):
        check_url("https://a..b/")  # an empty label: no name server is asked
    with pytest.raises(ActionError, match=r"url is malformed"):
        check_url("https://example.org:99999/")
