"""A platform client's session reads its environment once, when built, and still goes through the
proxy the environment names (and around it for `no_proxy`), as a session reading it per request."""

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from router.platforms.base import PostRequest
from router.platforms.mastodon import MastodonClient
from tests.support.fake_mastodon import FakeMastodon

TOKEN = "masto-proxy-test-token"


class ForwardingProxy:
    """An HTTP proxy on 127.0.0.1 that forwards absolute-form requests and records their lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                proxy.lines.append(f"{self.command} {self.path}")
                target = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=5)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection",)}
                upstream.request(self.command, target.path + (f"?{target.query}" if target.query else ""),
                                 body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = _forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ForwardingProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    server = FakeMastodon(token=TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def proxy_env(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def post_once(fake) -> str:
    client = MastodonClient({"MASTODON_INSTANCE": fake.url, "MASTODON_TOKEN": TOKEN}, {}, 5.0)
    try:
        return client.post(PostRequest(text="through whatever the environment says")).id
    finally:
        client.close()


def test_a_post_goes_through_the_proxy_the_environment_names(fake, proxy_env):
    with ForwardingProxy() as proxy:
        proxy_env.setenv("HTTP_PROXY", proxy.url)
        post_id = post_once(fake)
    assert post_id in fake.statuses
    assert f"POST {fake.url}/api/v1/statuses" in proxy.lines


def test_no_proxy_takes_the_platform_around_it(fake, proxy_env):
    with ForwardingProxy() as proxy:
        proxy_env.setenv("HTTP_PROXY", proxy.url)
        proxy_env.setenv("NO_PROXY", "127.0.0.1")
        post_id = post_once(fake)
    assert post_id in fake.statuses and proxy.lines == []


def test_the_environment_is_read_when_the_client_is_built_not_per_request(fake, proxy_env):
    client = MastodonClient({"MASTODON_INSTANCE": fake.url, "MASTODON_TOKEN": TOKEN}, {}, 5.0)
    try:
        with ForwardingProxy() as proxy:
            proxy_env.setenv("HTTP_PROXY", proxy.url)  # set after the client was built
            client.post(PostRequest(text="direct, as the client was built"))
        assert proxy.lines == []
        assert client.session.trust_env is False
    finally:
        client.close()
