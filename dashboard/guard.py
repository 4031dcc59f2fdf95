"""Who may ask the dashboard anything: the Host it is asked under, the page it is asked from, the
token, and how many wrong tokens an address sent.

- **Host.** A page on another name that resolves to this machine (DNS rebinding) is same-origin
  with the dashboard as far as the browser knows, so it could read every answer. Only the names
  the dashboard is opened under are answered: the loopback names, `DASHBOARD_HOST` when it is a
  name or address (not a wildcard), and the host of `DASHBOARD_ORIGIN`. Anything else is 421.
- **Origin.** When a browser names the page a request comes from, it must be the dashboard's own
  (`DASHBOARD_ORIGIN`, or the allowed Host it was sent to), for reads too.
- **Wrong tokens.** Only a request that carries a token, and a wrong one, counts towards the
  429: another site's page can send no Authorization header at all (no-cors requests cannot,
  and a preflight is never answered), so it cannot lock the owner out by sending requests.
- **The owner is never locked out by someone else's guesses** when the token is a strong one
  (`strong_token`: 32 varied characters or more, as `./safeclaw` makes them; no guesser finds
  one). Behind a proxy or a tunnel every request comes from the proxy's address,
  so a stranger's twenty wrong tokens would otherwise refuse the owner's kill switch too. A
  weak token chosen by hand keeps the old rule: a locked-out address gets 429 even with the
  right token, so a guesser learns nothing while the address is blocked.
- **Another site, said by the browser.** `Sec-Fetch-Site: cross-site` or `same-site` on an API
  request is refused like a foreign Origin (a request a browser sends without an Origin still
  says where it comes from); the page itself may be opened from a link anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import string
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.requests import Request

from dashboard.settings import DashboardSettings
from dashboard.throttle import FailedLogins

log = logging.getLogger("safeclaw.dashboard")

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
STRONG_TOKEN_CHARS = 32
FOREIGN_SITES = frozenset({"cross-site", "same-site"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "replace")).digest()


def host_name(netloc: str) -> str:
    """The name of `host[:port]` or `[v6]:port`, lower case ('' when it does not parse)."""
    try:
        return (urlsplit(f"//{netloc}").hostname or "").lower()
    except ValueError:
        return ""


@dataclass(frozen=True)
class Refusal:
    """Why a request is not answered: the status and the JSON body's error and message."""

    status: int
    error: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


class RequestGuard:
    def __init__(self, settings: DashboardSettings) -> None:
        self.origin = settings.origin
        self.public_read = settings.public_read
        self.failed_logins = FailedLogins()
        names = set(LOOPBACK_NAMES)
        if settings.host.strip().lower() not in WILDCARDS:
            names.add(settings.host.strip().strip("[]").lower())
        if settings.origin:
            names.add(host_name(urlsplit(settings.origin).netloc))
        self.names = frozenset(names)
        self._token_digest = _digest(settings.token)
        self.strong_token = strong_token(settings.token)

    def host_allowed(self, request: Request) -> bool:
        return host_name(request.headers.get("host", "")) in self.names

    def origin_allowed(self, request: Request, page: bool = False) -> bool:
        """No Origin (a command-line client, a same-origin GET) or the dashboard's own page; for
        the API, no browser saying the request comes from another site."""
        if not page and request.headers.get("sec-fetch-site", "").strip().lower() in FOREIGN_SITES:
            return False
        origin = request.headers.get("origin")
        if origin is None:
            return True
        origin = origin.strip().rstrip("/").lower()
        own = {f"{scheme}://{request.headers.get('host', '').lower()}" for scheme in ("http", "https")}
        if self.origin:
            own.add(self.origin)
        return origin in own

    @staticmethod
    def token_given(request: Request) -> bool:
        return bool(request.headers.get("authorization", "").strip())

    def authorised(self, request: Request) -> bool:
        parts = request.headers.get("authorization", "").split(None, 1)
        scheme, given = (parts[0], parts[1].strip()) if len(parts) == 2 else ("", "")
        # Digests of equal length, compared in constant time: neither the length nor a prefix leaks.
        matches = hmac.compare_digest(_digest(given), self._token_digest)
        return scheme.lower() == "bearer" and matches

    def names_text(self) -> str:
        return ", ".join(sorted(self.names))

    def refusal(self, request: Request, admin: bool, page: bool = False) -> Refusal | None:
        """Why this request is not answered, or None. In this order: a Host the dashboard is not
        opened under (DNS rebinding), another site's page, an address that sent too many wrong
        tokens, no token or a wrong one (only a wrong one counts)."""
        client = request.client.host if request.client else "?"
        where = f"{request.method} {request.url.path} from {client}"
        if not self.host_allowed(request):
            log.warning("421 for %s: Host is not a name this dashboard is opened under", where)
            message = (
                f"this dashboard answers only under {self.names_text()}; to open it under "
                "another name set DASHBOARD_ORIGIN=<scheme>://<name>[:port] in dashboard/.env"
            )
            return Refusal(421, "wrong_host", message)
        if not self.origin_allowed(request, page):
            log.warning("403 for %s: sent by another site's page", where)
            return Refusal(403, "cross_origin", "the dashboard answers only requests from its own page")
        if page or (not admin and self.public_read and request.method == "GET"):
            return None
        wait = self.failed_logins.blocked(client)
        if wait and self.strong_token and self.authorised(request):
            wait = 0.0  # the owner's own token: no one else's guesses refuse it
        if wait:
            log.warning("429 for %s: too many wrong tokens", where)
            return Refusal(
                429, "too_many_attempts", "too many wrong tokens; wait", {"Retry-After": str(int(wait) + 1)}
            )
        if not self.authorised(request):
            given = self.token_given(request)
            if given:
                self.failed_logins.failed(client)
            log.warning("401 for %s: %s", where, "a wrong token" if given else "no token")
            message = "send Authorization: Bearer <DASHBOARD_TOKEN>"
            return Refusal(401, "unauthorised", message, {"WWW-Authenticate": "Bearer"})
        return None


def strong_token(token: str) -> bool:
    """A token no guesser finds, as a machine makes them (`secrets.token_urlsafe(24)`, `openssl rand
    -hex 16` or longer): 32 characters or more, varied (16 different ones, 10 for hex), mixing two
    of lower case, upper case and digits. Short words and sequences typed by hand are not."""
    if len(token) < STRONG_TOKEN_CHARS:
        return False
    if all(c in string.hexdigits for c in token):
        return len(set(token.lower())) >= 10
    classes = (any(map(str.islower, token)), any(map(str.isupper, token)), any(map(str.isdigit, token)))
    return sum(classes) >= 2 and len(set(token)) >= 16
