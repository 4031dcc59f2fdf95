"""Why a page could not be reached, blaming the right thing: a name that does not resolve while
the machine is offline is no wrong URL (offline, every name fails to resolve), so only a malformed
address is told "check the URL"; the rest say the machine, or that site, cannot be reached
(protocol.reach asks whether the machine has a network, in the words the router uses too)."""

from __future__ import annotations

import socket

from protocol import reach


def lookup_failure(host: str, exc: socket.gaierror) -> str:
    if not reach.has_route():
        return f"cannot reach {host!r}: {reach.NO_NETWORK} (no route to the internet)"
    if exc.errno == socket.EAI_AGAIN:  # the name server gave no answer
        return f"cannot reach {host!r}: {reach.NO_NAME_SERVER}"
    # Any name, not a platform's own: it may be a site that does not exist.
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
