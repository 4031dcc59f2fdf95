"""Why a page could not be reached, blaming the right thing: a name that does not resolve while
the machine is offline is no wrong URL (offline, every name fails to resolve), so only a malformed
address is told "check the URL"; the rest say the machine, or that site, cannot be reached."""

from __future__ import annotations

import socket

# Any public address: connecting a UDP socket only looks the route up, nothing is sent.
ROUTE_PROBE = ("198.51.100.1", 53)


def has_route() -> bool:
    """Whether this machine has a route to the internet at all."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(ROUTE_PROBE)
    except OSError:
        return False
    return True


def lookup_failure(host: str, exc: socket.gaierror) -> str:
    if not has_route():
        return f"cannot reach {host!r}: this machine has no network connection (no route to the internet)"
    if exc.errno == socket.EAI_AGAIN:  # the name server gave no answer
        return f"cannot reach {host!r}: the name server does not answer (is this machine online?)"
    return f"cannot reach {host!r}: {NET_ERROR_HINTS['ERR_NAME_NOT_RESOLVED']}"


# Chromium's (and the guard proxy's) network error codes, in the same words.
NET_ERROR_HINTS = {
    "ERR_CONNECTION_REFUSED":
        "the site refuses the connection: nothing answers at that address (is it running?)",
    "ERR_NAME_NOT_RESOLVED":
        "its name could not be looked up (this machine may be offline, or there is no such site)",
    "ERR_CONNECTION_TIMED_OUT": "it did not answer in time (this machine or the site may be offline)",
    "ERR_TIMED_OUT": "it did not answer in time (this machine or the site may be offline)",
    "ERR_CONNECTION_RESET": "the connection was cut off",
    "ERR_ADDRESS_UNREACHABLE": "there is no route to it from this machine (is this machine online?)",
    "ERR_INTERNET_DISCONNECTED": "this machine has no network connection",
    "ERR_CERT_AUTHORITY_INVALID": "the site's TLS certificate is not trusted",
    "ERR_UNSAFE_PORT": "the browser refuses that port",
}
