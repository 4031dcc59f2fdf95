"""The requests session a platform client keeps: its environment read once, when it is built.

A session that trusts the environment reads the proxy variables (and `no_proxy`) and the CA bundle
variables again on every request: a sixth of a post's time in the router, for values that do not
change while it runs. This session is given them once, as requests would have found them for the
platform's address, and so goes through the same proxy and trusts the same CAs. (It also skips
`~/.netrc`, which requests would read for a login: a platform client sends its own.)
"""

from __future__ import annotations

import os

import requests
from requests.utils import get_environ_proxies


def session_for(base_url: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.proxies.update(get_environ_proxies(base_url))
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        session.verify = bundle
    return session
