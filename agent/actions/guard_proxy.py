"""The browser's only way out: a filtering HTTP proxy that checks every request before it leaves.

Chromium is started with `--proxy-server` pointing here and `--proxy-bypass-list=<-loopback>`
(so even loopback addresses go through it). Every request the page makes — the navigation,
each redirect, iframes, images, fetch/XHR, WebSockets (which Chromium always tunnels with
CONNECT) — reaches the proxy first, which checks its host and port with the URL guard and then
connects to the very address it checked (no second DNS lookup, so no rebinding). A refused
request gets 403 and never leaves the machine; every refusal is recorded.

With `allow_private` (browser.allow_private_addresses: the owner may open a local page by its
address), a page's requests may reach a loopback, private or own address only on the host the owner
opened (`local_page`): a public page, or a redirect from one, reaches no service on this machine or
its network, as Chromium's Private Network Access would have it (Chromium cannot tell the address
space of a request it sends through a proxy).

Tests map a test-only host name to a loopback port (`test_hosts`), so attacker pages can be
served from 127.0.0.1 while the guard still refuses every other loopback address.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from agent.actions.context import ActionError
from agent.actions.proxy_wire import Refused, pipe_both_ways, rewritten_head, split_absolute, split_host_port
from agent.actions.url_guard import CheckedURL, check_url, local_addresses
from agent.flow.sinks import PageSinks

log = logging.getLogger("safeclaw.agent.browser.proxy")
MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT = 15.0
CONNECT_TIMEOUT = 10.0
UNREACHABLE = (
    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s"
)
REFUSED = (
    b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
)


# Hosts Chromium itself calls (updates, sign-in, the search engine's start page): refused like any
# other, but not reported as the page's requests.
BROWSER_SERVICE_HOSTS = (
    ".googleapis.com",
    "accounts.google.com",
    "clients2.google.com",
    "start.duckduckgo.com",
    ".gvt1.com",
)
class Unreachable(Exception):
    """An allowed request whose server could not be reached; the message is Chromium's error code."""


@dataclass
class ProxyLog:
    """What the proxy let out and what it refused, in order (host:port, and the reason)."""

    allowed: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)  # allowed, but could not connect


class GuardProxy:
    """Runs on its own thread and event loop for one browser session; `with GuardProxy(...) as p`."""

    def __init__(
        self,
        allow_private: bool = False,
        test_hosts: Mapping[str, tuple[str, int]] | None = None,
        bind: str = "127.0.0.1",
        sinks: PageSinks | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.local_page: CheckedURL | None = None  # the local page the owner opened (allow_private)
        self.sinks = sinks  # what owner-only data a request may carry (agent.flow.sinks)
        self.test_hosts = {name.lower(): target for name, target in (test_hosts or {}).items()}
        self.bind = bind
        self.log = ProxyLog()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="browser-guard", daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def address(self) -> str:
        return f"{self.bind}:{self.port}"

    def start(self) -> GuardProxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(10)
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        if not self._loop.is_running():
            self._loop.close()

    def __enter__(self) -> GuardProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check_page_url(self, url: object) -> CheckedURL:
        """The guard's verdict on a page address (the test names included); ActionError if refused."""
        if isinstance(url, str):
            parts = urlsplit(url.strip())
            mapped = self.test_hosts.get((parts.hostname or "").rstrip("."))
            if mapped is not None and parts.scheme in ("http", "https"):
                if (parts.port or (443 if parts.scheme == "https" else 80)) != mapped[1]:
                    raise ActionError(f"refused: {parts.hostname} is for tests on port {mapped[1]} only")
                return CheckedURL(url.strip(), str(parts.hostname), (mapped[0],))
        checked = check_url(url, self.allow_private)
        if self.allow_private and local_addresses(checked.addresses):
            self.local_page = checked  # else a public page: its requests reach no local address
        return checked

    def _local_refusal(self, host: str, checked: CheckedURL) -> str | None:
        """Why a page's request may not go to these checked addresses, when `allow_private` let them
        pass: they are local and not on the host of the local page the owner opened."""
        local = local_addresses(checked.addresses)
        page = self.local_page
        if not local or (page is not None and (host.lower().rstrip(".") == page.host.lower()
                                               or set(checked.addresses) <= set(page.addresses))):
            return None
        return (f"{host} is a local address ({', '.join(local)}) and this page is not the local page "
                "you opened: a page may not reach the services of this machine or its network")

    def refused_summary(self) -> list[str]:
        """The page's requests refused during the visit (host:port), each once, at most 20; the
        browser's own service calls (refused too) are left out of it."""
        return list(
            dict.fromkeys(
                where
                for where, _ in self.log.refused
                if not where.split(":")[0].endswith(BROWSER_SERVICE_HOSTS)
            )
        )[:20]

    def refusals_note(self) -> str:
        refused = self.refused_summary()
        return f" (the guard refused requests to {', '.join(refused)})" if refused else ""

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.bind, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- one client connection ---------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._one_request(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        if len(head) > MAX_HEAD_BYTES:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = [*lines[0].split(" "), "", "", ""][:3]
        try:
            if method.upper() == "CONNECT":
                host, port = split_host_port(target, 443)
                self._check_flow(host, port, target)
                address = await self._check(host, port, "https")
                upstream_reader, upstream_writer = await self._open(address, port)
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                host, port, path = split_absolute(target)
                self._check_flow(host, port, target)
                address = await self._check(host, port, "http")
                upstream_reader, upstream_writer = await self._open(address, port)
                upstream_writer.write(rewritten_head(method, path, version, lines[1:]))
        except Refused as exc:
            body = f"SafeClaw refused this request: {exc}\n".encode()
            writer.write(REFUSED % (len(body), body))
            await writer.drain()
            return
        except Unreachable as exc:
            body = f"SafeClaw could not connect: {exc}\n".encode()
            writer.write(UNREACHABLE % (len(body), body))
            await writer.drain()
            return
        await writer.drain()
        await pipe_both_ways(reader, writer, upstream_reader, upstream_writer)

    async def _check(self, host: str, port: int, scheme: str) -> str:
        """The address to connect to, if the guard allows host:port; else Refused (and recorded)."""
        where = f"{host}:{port}"
        mapped = self.test_hosts.get(host.lower().rstrip("."))
        if mapped is not None:
            if mapped[1] != port:
                self._refuse(where, f"{host} is allowed for tests on port {mapped[1]} only")
            self.log.allowed.append(where)
            return mapped[0]
        shown = f"[{host}]" if ":" in host else host
        try:
            checked = await asyncio.to_thread(check_url, f"{scheme}://{shown}:{port}/", self.allow_private)
        except ActionError as exc:
            self._refuse(where, str(exc))
        local = await asyncio.to_thread(self._local_refusal, host, checked) if self.allow_private else None
        if local is not None:
            self._refuse(where, local)
        self.log.allowed.append(where)
        return checked.addresses[0]

    def _check_flow(self, host: str, port: int, target: str) -> None:
        """A request that would carry the owner's data where the owner did not send it is refused
        (the URL when the proxy sees it, the host name of a tunnel)."""
        reason = self.sinks.request_refusal(host, target) if self.sinks is not None else None
        if reason is not None:
            self._refuse(f"{host}:{port}", reason)

    def _refuse(self, where: str, reason: str) -> None:
        self.log.refused.append((where, reason))
        log.warning("browser request to %s refused: %s", where, reason)
        raise Refused(reason)

    async def _open(self, address: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            code = "ERR_ADDRESS_UNREACHABLE"
            if isinstance(exc, ConnectionRefusedError):
                code = "ERR_CONNECTION_REFUSED"
            elif isinstance(exc, TimeoutError):
                code = "ERR_CONNECTION_TIMED_OUT"
            self.log.unreachable.append((f"{address}:{port}", code))
            raise Unreachable(code) from None
