"""Every request the browser makes is checked before it leaves (the guard proxy), in real Chromium.

Attacker pages are served from 127.0.0.1 under the test-only name `attacker.test` (mapped with
SAFECLAW_TEST_BROWSER_HOSTS, honoured only with SAFECLAW_TEST_HOOKS=1). A protected server on
another loopback port counts every TCP connection it gets: it must get none, whatever the page
tries — redirects (302, meta refresh, JavaScript 150 ms later), iframes, images, fetch, XHR,
beacons, forms, WebSockets, other spellings of loopback.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent.actions import ActionError
from agent.actions.browser_vision import browser_vision
from agent.actions.guard_proxy import GuardProxy
from agent.config.sections import browser_test_hosts
from agent.errors import ConfigError
from tests.agent.actions.conftest import browser_settings

pytestmark = pytest.mark.slow
GUARDED = {"allow_private_addresses": False, "page_load_timeout": 10, "total_timeout": 40}
SECRET = "SECRET-LOOPBACK-7731"


class ProtectedServer:
    """A service the browser must never reach (on loopback unless told): it counts every connection."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.05)
        self.connections = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with conn:
                body = f"<html><body>{SECRET}</body></html>".encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def start(self) -> ProtectedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(5)
        self.sock.close()


def attacker_pages(protected: int) -> dict[str, tuple[int, dict[str, str], str]]:
    loop = f"http://127.0.0.1:{protected}"
    page = "<!doctype html><html><head><title>Attacker</title>{head}</head><body><p>Attacker page</p>{body}</body></html>"

    def html(head: str = "", body: str = "") -> tuple[int, dict[str, str], str]:
        return 200, {}, page.format(head=head, body=body + '<img src="/slow.png">')

    return {
        "/302": (302, {"Location": f"{loop}/302"}, ""),
        "/302-chain": (302, {"Location": "/302"}, ""),
        "/meta": html(head=f'<meta http-equiv="refresh" content="0;url=http://localhost:{protected}/meta">'),
        "/js": html(body=f"<script>setTimeout(() => {{ location.href = '{loop}/js'; }}, 150)</script>"),
        "/js-decimal": html(
            body=f"<script>setTimeout(() => {{ location = 'http://2130706433:{protected}/'; }}, 150)</script>"
        ),
        "/wrong-port": html(
            body=f"<script>setTimeout(() => {{ location = 'http://attacker.test:{protected}/'; }}, 150)"
            "</script>"
        ),
        "/iframe": html(body=f'<iframe src="{loop}/iframe"></iframe>'),
        "/img": html(
            body=f'<img src="http://localhost:{protected}/img.png"><img src="http://0x7f.1:{protected}/x">'
        ),
        "/fetch": html(
            body=f"""<script>
            fetch('{loop}/fetch').catch(() => {{}});
            const x = new XMLHttpRequest(); x.open('GET', '{loop}/xhr'); x.send();
            navigator.sendBeacon('{loop}/beacon', 'data');
            </script>"""
        ),
        "/ws": html(body=f"<script>new WebSocket('ws://127.0.0.1:{protected}/ws');</script>"),
        "/form": html(
            body=f'<form id="f" method="post" action="{loop}/form"><input name="a" value="b"></form>'
            "<script>document.getElementById('f').submit()</script>"
        ),
        **{f"/chain{i}": (302, {"Location": f"/chain{i + 1}"}, "") for i in range(9)},
        "/chain9": (307, {"Location": f"http://[::1]:{protected}/chain"}, ""),
        "/v6-loopback": (307, {"Location": f"http://[::1]:{protected}/"}, ""),
        "/mapped": html(
            body=f"<script>setTimeout(() => {{ location = 'http://[::ffff:7f00:1]:{protected}/'; }}, 150)</script>"
        ),
        "/octal": html(
            body=f"<script>setTimeout(() => {{ location = 'http://0177.0.0.01:{protected}/'; }}, 150)</script>"
        ),
        "/eventsource": html(body=f"<script>new EventSource('{loop}/events');</script>"),
        "/service-worker": html(
            body=f"<script>navigator.serviceWorker && navigator.serviceWorker.register('{loop}/sw.js')"
            ".catch(() => {{}});</script>"
        ),
        "/hints": html(
            head=f'<link rel="prefetch" href="{loop}/prefetch"><link rel="preconnect" href="{loop}">'
            f'<link rel="dns-prefetch" href="//localhost:{protected}"><link rel="preload" as="image" '
            f'href="{loop}/preload.png"><link rel="stylesheet" href="{loop}/style.css">'
        ),
        "/css": html(
            head=f"<style>@import url('{loop}/imported.css'); body {{ background: url('{loop}/bg.png') }}"
            f"@font-face {{ font-family: x; src: url('{loop}/font.woff') }} p {{ font-family: x }}</style>"
        ),
        "/popup": html(body=f"<script>window.open('{loop}/popup'); window.open('about:blank');</script>"),
        "/blank-data-blob": html(
            body=f"""<iframe id="blank"></iframe><script>
            const fetchIt = "<script>fetch('{loop}/from-frame').catch(() => {{}})<" + "/script>";
            const blankDoc = document.getElementById('blank').contentDocument;
            blankDoc.write(fetchIt); blankDoc.close();
            const data = document.createElement('iframe');
            data.src = 'data:text/html,' + encodeURIComponent(fetchIt); document.body.appendChild(data);
            const blob = new Blob([fetchIt], {{type: 'text/html'}});
            const frame = document.createElement('iframe');
            frame.src = URL.createObjectURL(blob); document.body.appendChild(frame);
            fetch(URL.createObjectURL(new Blob(['x']))).then(() => fetch('{loop}/after-blob')).catch(() => {{}});
            </script>"""
        ),
        "/embed-file": html(body='<embed src="file:///etc/hostname"><object data="file:///etc/passwd"></object>'
                            '<iframe src="file:///etc/hosts"></iframe><iframe src="/to-file"></iframe>'),
        "/to-file": (302, {"Location": "file:///etc/passwd"}, ""),
        "/download": html(
            body='<a id="d" href="/file.bin" download>file</a><script>document.getElementById("d").click();'
            "location.href = '/file.bin';</script>"
        ),
        "/file.bin": (
            200,
            {
                "Content-Disposition": 'attachment; filename="evil.desktop"',
                "Content-Type": "application/octet-stream",
            },
            "[Desktop Entry]\nExec=evil\n",
        ),
    }


class AttackerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pages: dict[str, tuple[int, dict[str, str], str]]) -> None:
        pages_ = pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/slow.png":  # holds the load event past the page's 150 ms timer
                    time.sleep(0.6)
                status, headers, body = pages_.get(self.path, (404, {}, "not here"))
                data = body.encode()
                self.send_response(status)
                for name, value in {"Content-Type": "text/html", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@pytest.fixture
def servers():
    protected = ProtectedServer().start()
    attacker = AttackerServer(attacker_pages(protected.port))
    attacker._thread.start()
    yield attacker, protected
    attacker.shutdown()
    attacker.server_close()
    protected.stop()


def guarded_ctx(make_ctx, attacker, **browser):
    env = {
        "SAFECLAW_TEST_HOOKS": "1",
        "SAFECLAW_TEST_BROWSER_HOSTS": f"attacker.test=127.0.0.1:{attacker.port}",
    }
    return make_ctx(browser={**GUARDED, **browser}, env=env)


def saved(workspace):
    return list(workspace.output_dir.glob("browser_vision-*"))


@pytest.mark.parametrize(
    "path",
    [
        "/302",
        "/302-chain",
        "/meta",
        "/js",
        "/js-decimal",
        "/wrong-port",
        "/form",
        "/chain0",
        "/v6-loopback",
        "/mapped",
        "/octal",
    ],
)
def test_a_page_that_moves_to_loopback_is_stopped_before_it_leaves_and_nothing_is_saved(
    chromium, servers, make_ctx, workspace, path
):
    attacker, protected = servers
    with pytest.raises(ActionError, match="refused"):
        browser_vision(
            {"url": f"http://attacker.test:{attacker.port}{path}"}, guarded_ctx(make_ctx, attacker)
        )
    assert protected.connections == 0
    assert saved(workspace) == []


@pytest.mark.parametrize(
    ("path", "blocked"),
    [
        ("/iframe", ["127.0.0.1:{p}"]),
        ("/img", ["localhost:{p}", "127.0.0.1:{p}"]),  # Chromium writes 0x7f.1 as 127.0.0.1
        ("/fetch", ["127.0.0.1:{p}"]),
        ("/ws", ["127.0.0.1:{p}"]),
    ],
)
def test_subresources_fetches_and_websockets_to_loopback_are_refused(
    chromium, servers, make_ctx, workspace, path, blocked
):
    attacker, protected = servers
    result = browser_vision(
        {"url": f"http://attacker.test:{attacker.port}{path}"}, guarded_ctx(make_ctx, attacker)
    )
    assert protected.connections == 0
    for where in blocked:
        assert where.format(p=protected.port) in result["blocked_requests"]
    text = workspace.output_file(result["files"]["txt"]).read_text()
    html = workspace.output_file(result["files"]["html"]).read_text()
    assert "Attacker page" in text and SECRET not in text and SECRET not in html


@pytest.mark.parametrize(
    "path", ["/eventsource", "/service-worker", "/hints", "/css", "/popup", "/blank-data-blob"]
)
def test_no_other_way_out_of_the_page_reaches_loopback(chromium, servers, make_ctx, workspace, path):
    attacker, protected = servers
    result = browser_vision(
        {"url": f"http://attacker.test:{attacker.port}{path}"}, guarded_ctx(make_ctx, attacker)
    )
    time.sleep(0.3)  # anything the page started late would have connected by now
    assert protected.connections == 0, result.get("blocked_requests")
    assert "Attacker page" in workspace.output_file(result["files"]["txt"]).read_text()


class UdpListener:
    """A loopback UDP port that counts every datagram it gets (a STUN server a page may aim at)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.datagrams = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                self.sock.recvfrom(2048)
            except TimeoutError:
                continue
            except OSError:
                return
            self.datagrams += 1

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(5)
        self.sock.close()


def test_webrtc_sends_no_datagram_to_a_local_address(chromium, make_ctx, workspace):
    """Issue 19, item 10: 8 UDP datagrams from a page reached 127.0.0.1 over WebRTC (STUN), since
    this Chromium ignores the command-line switch; the profile's preference holds."""
    udp = UdpListener()
    stun = f"stun:127.0.0.1:{udp.port}"
    page = f"""<!doctype html><html><body><p>Attacker page</p><script>
      for (let i = 0; i < 3; i++) {{
        const pc = new RTCPeerConnection({{iceServers: [{{urls: '{stun}'}},
          {{urls: 'turn:127.0.0.1:{udp.port}?transport=udp', username: 'u', credential: 'p'}}]}});
        pc.createDataChannel('x');
        pc.createOffer().then(o => pc.setLocalDescription(o));
      }}
    </script><img src="/slow.png"></body></html>"""
    attacker = AttackerServer({"/rtc": (200, {}, page)})
    attacker._thread.start()
    try:
        browser_vision({"url": f"http://attacker.test:{attacker.port}/rtc"}, guarded_ctx(make_ctx, attacker))
        time.sleep(1.5)  # ICE gathering runs on after the load event
    finally:
        attacker.shutdown()
        attacker.server_close()
        udp.stop()
    assert udp.datagrams == 0


def test_a_page_embedding_local_files_is_read_without_waiting_for_the_total_timeout(
    chromium, servers, make_ctx, workspace
):
    """Issue 19, item 12: `<embed src=file://…>` made a visit hang until the total timeout."""
    attacker, _ = servers
    ctx = guarded_ctx(make_ctx, attacker)
    started = time.monotonic()
    result = browser_vision({"url": f"http://attacker.test:{attacker.port}/embed-file"}, ctx)
    took = time.monotonic() - started
    text = workspace.output_file(result["files"]["txt"]).read_text()
    html = workspace.output_file(result["files"]["html"]).read_text()
    assert "Attacker page" in text and "root:" not in text and "root:" not in html
    assert took < GUARDED["total_timeout"] - 5, took  # a hang guard, not a speed test


def test_a_page_cannot_download_a_file_onto_the_disk(
    chromium, servers, make_ctx, workspace, tmp_path, monkeypatch
):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DOWNLOAD_DIR", str(home / "Downloads"))
    attacker, _ = servers
    # A page that turns into a download may have nothing to capture: a refusal is fine too.
    with contextlib.suppress(ActionError):
        browser_vision(
            {"url": f"http://attacker.test:{attacker.port}/download"}, guarded_ctx(make_ctx, attacker)
        )
    time.sleep(1.0)
    written = [p for p in home.rglob("*") if "evil" in p.name or p.suffix == ".crdownload"]
    written += [p for p in workspace.root.rglob("*evil*")]
    assert written == []


def test_the_test_names_need_the_test_hooks_switch():
    with pytest.raises(ConfigError, match="for tests only"):
        browser_test_hosts({"SAFECLAW_TEST_BROWSER_HOSTS": "attacker.test=127.0.0.1:80"})
    for bad in ("example.com=127.0.0.1:80", "attacker.test=10.0.0.1:80", "attacker.test=127.0.0.1"):
        with pytest.raises(ConfigError, match="is not <name>.test"):
            browser_test_hosts({"SAFECLAW_TEST_HOOKS": "1", "SAFECLAW_TEST_BROWSER_HOSTS": bad})


@pytest.mark.parametrize(
    "target",
    [
        "127.0.0.1:{p}",
        "localhost:{p}",
        "[::1]:{p}",
        "2130706433:{p}",
        "0x7f000001:{p}",
        "127.1:{p}",
        "[::ffff:127.0.0.1]:{p}",
        "0.0.0.0:{p}",
        "attacker.test:{p}",
        "10.0.0.1:80",
        "169.254.169.254:80",
    ],
)
def test_the_proxy_refuses_connect_and_plain_requests_to_private_targets(servers, target):
    attacker, protected = servers
    target = target.format(p=protected.port)
    with GuardProxy(False, {"attacker.test": ("127.0.0.1", attacker.port)}) as proxy:
        for request in (
            f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n",
            f"GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\n\r\n",
        ):
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
                client.sendall(request.encode())
                answer = client.recv(4096)
            assert answer.startswith(b"HTTP/1.1 403"), (request, answer)
    assert protected.connections == 0


def test_the_proxy_lets_an_allowed_request_through_to_the_checked_address(servers):
    attacker, _ = servers
    request = (
        f"GET http://attacker.test:{attacker.port}/iframe HTTP/1.1\r\nHost: x\r\n"
        "Proxy-Connection: keep-alive\r\n\r\n"
    )
    answer = b""
    with GuardProxy(False, {"attacker.test": ("127.0.0.1", attacker.port)}) as proxy:
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        with client:
            client.sendall(request.encode())
            while chunk := client.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.0 200") and b"Attacker page" in answer
    assert proxy.log.allowed == [f"attacker.test:{attacker.port}"]


def test_a_remote_browser_elsewhere_needs_the_guard_reachable():
    with pytest.raises(ConfigError, match="BROWSER_PROXY_LISTEN=0.0.0.0"):
        browser_settings(env={"REMOTE_BROWSER_SERVER": "http://browser:4444"})
    env = {
        "REMOTE_BROWSER_SERVER": "http://browser:4444",
        "BROWSER_PROXY_LISTEN": "0.0.0.0",
        "BROWSER_PROXY_ADDRESS": "agent",
    }
    settings = browser_settings(env=env)
    assert (settings.proxy_listen, settings.proxy_address) == ("0.0.0.0", "agent")
    local = browser_settings(env={"REMOTE_BROWSER_SERVER": "http://127.0.0.1:4444"})
    assert (local.proxy_listen, local.proxy_address) == ("127.0.0.1", "127.0.0.1")


def own_lan_addresses() -> list[str]:
    from agent.actions.url_guard import own_addresses

    return sorted(str(a) for a in own_addresses() if a.version == 4 and not a.is_loopback)


@pytest.mark.skipif(not own_lan_addresses(), reason="this machine has no address but loopback")
@pytest.mark.parametrize("allow_private", [False, True])
def test_a_page_reaches_no_service_on_the_machines_own_other_addresses(chromium, make_ctx, workspace,
                                                                       allow_private):
    """Issue 29: behind the guard, a page still connected to a service on the machine's own public
    address twice (an image and a fetch; its content was not saved, but a blind request is a sink).
    With browser.allow_private_addresses (the owner opens local pages), a page from outside made 3
    connections to this machine's own address: only the local page the owner opened is local."""
    protected = ProtectedServer("0.0.0.0").start()  # every address of the machine, as many services listen
    targets = [f"http://{address}:{protected.port}" for address in own_lan_addresses()]
    body = "".join(f'<img src="{t}/i.png"><iframe src="{t}/f"></iframe>' for t in targets)
    body += "<script>" + "".join(f"fetch('{t}/x', {{mode: 'no-cors'}}).catch(() => {{}});" for t in targets)
    body += "</script>"
    page = f"<!doctype html><html><body><p>Attacker page</p>{body}<img src='/slow.png'></body></html>"
    attacker = AttackerServer({"/own": (200, {}, page)})
    attacker._thread.start()
    try:
        ctx = guarded_ctx(make_ctx, attacker, allow_private_addresses=allow_private)
        result = browser_vision({"url": f"http://attacker.test:{attacker.port}/own"}, ctx)
        time.sleep(0.3)  # anything the page started late would have connected by now
        assert protected.connections == 0, (targets, result.get("blocked_requests"))
        assert all(t.removeprefix("http://") in result["blocked_requests"] for t in targets), result
    finally:
        attacker.shutdown()
        attacker.server_close()
        protected.stop()
