"""Whether this machine can reach the internet at all, asked when a name did not resolve or a
connection found no way out: offline every name fails to resolve, so such a failure is told as the
machine's, not as a wrong address or a site at fault. The agent's /browse and the router's platform
calls say it in the same words."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable

# Any public address: connecting a UDP socket only looks the route up, nothing is sent.
ROUTE_PROBE = ("198.51.100.1", 53)
NO_NETWORK = "this machine has no network connection"
NOT_LOOKED_UP = "its address could not be looked up (is this machine online?)"
NO_NAME_SERVER = "the name server does not answer (is this machine online?)"
NO_ROUTE = "there is no route to it from this machine (is this machine online?)"


def has_route() -> bool:
    """Whether this machine has a route to the internet at all."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(ROUTE_PROBE)
    except OSError:
        return False
    return True


def why_unreachable(chain: Iterable[BaseException]) -> str | None:
    """Why a site could not be reached when the failure lies on this machine's side (an exception and
    its causes): no network at all, no name server, a name that did not resolve, no route; None for
    any other failure (a refused connection, a timeout), which is the site's to explain."""
    for exc in chain:
        if isinstance(exc, socket.gaierror):
            if not has_route():
                return NO_NETWORK
            return NO_NAME_SERVER if exc.errno == socket.EAI_AGAIN else NOT_LOOKED_UP
        if isinstance(exc, OSError) and exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return NO_NETWORK if not has_route() else NO_ROUTE
    return None
