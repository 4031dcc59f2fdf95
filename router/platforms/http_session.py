"""The requests session a platform client keeps: its environment read once, when it is built.

A session that trusts the environment reads the proxy variables (and `no_proxy`) and the CA bundle
variables again on every request: a sixth of a post's time in the router, for values that do not
change while it runs. This session is given them once, as requests would have found them for the
platform's address, and so goes through the same proxy and trusts the same CAs. (It also skips
`~/.netrc`, which requests would read for a login: a platform client sends its own.)

Each request that may change something (`base.is_write`) asks the client's `before_write` first,
right before it leaves: the running command's last-moment check.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.utils import get_environ_proxies

from router.platforms.base import is_write, no_check


class WriteCheckedSession(requests.Session):
    """A session whose writes ask `before_write` right before they leave (it raises to stop one)."""

    def __init__(self, before_write: Callable[[], None] = no_check) -> None:
        super().__init__()
        self.before_write = before_write

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        target = url.decode() if isinstance(url, bytes) else url
        if is_write(method, urlsplit(target).path):
            self.before_write()
        return super().request(method, url, *args, **kwargs)


def session_for(base_url: str, before_write: Callable[[], None] = no_check) -> WriteCheckedSession:
    session = WriteCheckedSession(before_write)
    session.trust_env = False
    session.proxies.update(get_environ_proxies(base_url))
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        session.verify = bundle
    return session
