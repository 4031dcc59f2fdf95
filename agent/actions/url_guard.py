"""Which URLs the browser may open: http(s) only, no credentials, no private networks, and
none of this machine's own addresses (a service listening on 0.0.0.0 answers on the machine's
public address too, which no list of private ranges holds).

Every address a host name resolves to is checked (IPv4 and IPv6, IPv4-mapped IPv6 and the
legacy decimal/octal/hex IPv4 spellings browsers accept), because a name that resolves to
one public and one loopback address is as dangerous as a loopback literal.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agent.actions.context import ActionError
from agent.actions.unreachable import lookup_failure

ALLOWED_SCHEMES = ("http", "https")
MAX_URL_CHARS = 2048
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class CheckedURL:
    url: str
    host: str  # the host name as the browser will see it (IDNA-encoded, no brackets)
    addresses: tuple[str, ...]  # every address the host resolved to, all checked


def is_public_address(address: IPAddress) -> bool:
    """True for a globally routable unicast address; false for loopback, private, link-local …"""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if mapped is not None and not is_public_address(mapped):
            return False
        if address.ipv4_mapped is not None:
            return True
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_loopback
        or address.is_link_local or address.is_unspecified or address.is_private
    )


_SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address
OWN_ADDRESSES_TTL = 10.0  # seconds the list of this machine's addresses is kept before it is read again
_own: tuple[float, frozenset[IPAddress]] = (0.0, frozenset())
_own_lock = threading.Lock()


def own_addresses() -> frozenset[IPAddress]:
    """Every address of this machine's own interfaces (IPv4 and IPv6), and what its host name
    resolves to; read again every few seconds, since interfaces come and go."""
    global _own
    with _own_lock:
        read_at, addresses = _own
        if time.monotonic() - read_at < OWN_ADDRESSES_TTL:
            return addresses
        found: set[IPAddress] = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
        found |= _interface_ipv4() | _interface_ipv6() | _host_name_addresses()
        _own = (time.monotonic(), frozenset(found))
        return _own[1]


def _interface_ipv4() -> set[IPAddress]:
    found: set[IPAddress] = set()
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _index, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                request = struct.pack("256s", name.encode()[:15])
                answer = fcntl.ioctl(sock.fileno(), _SIOCGIFADDR, request)
                found.add(ipaddress.IPv4Address(answer[20:24]))
    return found


def _interface_ipv6() -> set[IPAddress]:
    """From /proc/net/if_inet6 (Linux): one line per address, its 32 hex digits first."""
    with contextlib.suppress(OSError, ValueError):
        lines = Path("/proc/net/if_inet6").read_text().splitlines()
        return {ipaddress.IPv6Address(bytes.fromhex(line.split()[0])) for line in lines if line.strip()}
    return set()


def _host_name_addresses() -> set[IPAddress]:
    with contextlib.suppress(OSError, UnicodeError):
        infos = socket.getaddrinfo(socket.gethostname(), None)
        return {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    return set()


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host string spells, also in the forms inet_aton accepts (0x7f000001, 0177.1)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    if all(part and part.isalnum() for part in host.split(".")):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to; ActionError when it does not resolve."""
    literal = parse_ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ActionError(lookup_failure(host, exc)) from None
    except UnicodeError:
        raise ActionError(f"{host!r} is not a valid host name; check the URL") from None
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise ActionError(f"the host {host!r} resolves to no address")
    return addresses


def _unmapped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def local_addresses(addresses: tuple[str, ...]) -> list[str]:
    """Those of `addresses` a page from outside may not reach: loopback, private, reserved, or this
    machine's own (the checked addresses themselves, never looked up again)."""
    own = own_addresses()
    found = [ipaddress.ip_address(a) for a in addresses]
    return [str(a) for a in found if not is_public_address(a) or a in own or _unmapped(a) in own]


def check_url(url: object, allow_private: bool = False) -> CheckedURL:
    """The URL if the browser may open it; else ActionError saying why not."""
    if not isinstance(url, str) or not url.strip():
        raise ActionError('url must be a non-empty string such as "https://example.org/"')
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise ActionError(f"url is too long ({len(url)} characters, at most {MAX_URL_CHARS})")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise ActionError("url must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ActionError(f"url is malformed ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = scheme + ":" if scheme else "a URL without a scheme"
        raise ActionError(f"only http:// and https:// URLs may be opened, not {shown}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ActionError("URLs with a user name or password in them are refused")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ActionError("url has no host name")
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise ActionError(f"the host name {host!r} is not valid") from None
    addresses = resolve(ascii_host, port or (443 if scheme == "https" else 80))
    if not allow_private:
        blocked = [str(a) for a in addresses if not is_public_address(a)]
        if blocked:
            raise ActionError(
                f"refused: {host} is a loopback, private, link-local or reserved address "
                f"({', '.join(blocked)}); set browser.allow_private_addresses to true in config.json "
                "to allow local pages"
            )
        own = [str(a) for a in addresses if a in own_addresses() or _unmapped(a) in own_addresses()]
        if own:
            raise ActionError(
                f"refused: {host} is this machine's own address ({', '.join(own)}); a page may not "
                "reach the services running here"
            )
    return CheckedURL(url=url, host=ascii_host, addresses=tuple(str(a) for a in addresses))
