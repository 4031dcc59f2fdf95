"""A fake Bluesky Jetstream: a `websockets` server on 127.0.0.1 that speaks Jetstream's wire.

`GET /subscribe?wantedCollections=…&cursor=<time_us>` upgrades to a WebSocket that sends one JSON
event per text message. Like the real service: with a cursor it replays the queued events whose
`time_us` is greater, then goes live; without one it sends only events queued after the
connection opened; commit events outside `wantedCollections` are filtered out, identity and
account events always pass. Each connection's query is recorded; connections can be dropped
(transport aborted, no close frame) and the next handshakes refused (503) on demand.

    with FakeJetstream() as fake:
        fake.queue(post_event("did:plc:alice", "3k1", "hi @owner", 1_700_000_000_000_001,
                              mentions=["did:plc:owner"]))
        ... BSKY_JETSTREAM_URL=fake.url ...
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

POST = "app.bsky.feed.post"


def post_event(author, rkey, text, time_us, mentions=(), reply_to=None, collection=POST, **record):
    """A commit event creating a post; `mentions` become mention facets, `reply_to` a parent URI."""
    body: dict[str, Any] = {"$type": collection, "text": text, "createdAt": "2025-01-01T00:00:00.000Z",
                            **record}
    if mentions:
        body["facets"] = [{"index": {"byteStart": 0, "byteEnd": 5},
                           "features": [{"$type": "app.bsky.richtext.facet#mention", "did": did}]}
                          for did in mentions]
    if reply_to:
        ref = {"uri": reply_to, "cid": "bafyreiparent"}
        body["reply"] = {"root": ref, "parent": ref}
    return {"did": author, "time_us": time_us, "kind": "commit",
            "commit": {"rev": "3kabc", "operation": "create", "collection": collection, "rkey": rkey,
                       "record": body, "cid": "bafyreipost"}}


def delete_event(author, rkey, time_us):
    return {"did": author, "time_us": time_us, "kind": "commit",
            "commit": {"rev": "3kabd", "operation": "delete", "collection": POST, "rkey": rkey}}


def identity_event(did, time_us, handle="someone.test"):
    return {"did": did, "time_us": time_us, "kind": "identity",
            "identity": {"did": did, "handle": handle, "seq": 1, "time": "2025-01-01T00:00:00.000Z"}}


class FakeJetstream:
    def __init__(self) -> None:
        self.connections: list[dict[str, list[str]]] = []  # each connection's parsed query
        self.refused = 0
        self.received: list[str | bytes] = []  # anything a client sent (a listener sends nothing)
        self._refuse_next = 0
        self._items: list[tuple[int, str, str | None]] = []  # (time_us, message, collection)
        self._live: set[ServerConnection] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-jetstream", daemon=True)
        self._server: Server | None = None
        self._grew: asyncio.Event | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/subscribe"

    # --- test controls (called from the test's thread) ------------------------------------
    def start(self) -> FakeJetstream:
        self._thread.start()
        self._call(self._start())
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> FakeJetstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def queue(self, *events: dict[str, Any]) -> None:
        """Add events (in time_us order); live connections get them at once."""
        self._call(self._add([(e["time_us"], json.dumps(e), _collection(e)) for e in events]))

    def queue_raw(self, message: str, time_us: int) -> None:
        """A message sent as is (malformed JSON, odd types…), ordered by `time_us` for replays."""
        self._call(self._add([(time_us, message, None)]))

    def drop_connections(self) -> None:
        """Cut every open connection without a close frame, as a network failure would."""
        self._call(self._drop())

    def refuse_next(self, count: int) -> None:
        """Answer the next `count` handshakes with 503, as an overloaded instance would."""
        self._refuse_next = count

    def cursors(self) -> list[str | None]:
        return [query.get("cursor", [None])[0] for query in self.connections]

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    # --- server side (on the fake's own event loop) ---------------------------------------
    async def _start(self) -> None:
        self._grew = asyncio.Event()
        self._server = await serve(self._serve, "127.0.0.1", 0, process_request=self._check_request)
        self.port = next(iter(self._server.sockets)).getsockname()[1]

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _add(self, items: Iterable[tuple[int, str, str | None]]) -> None:
        self._items.extend(items)
        assert self._grew is not None
        self._grew.set()
        self._grew = asyncio.Event()

    async def _drop(self) -> None:
        for connection in list(self._live):
            connection.transport.abort()

    async def _record_received(self, connection: ServerConnection) -> None:
        """Read what the client sends until the connection ends (its end is this task's end)."""
        try:
            async for message in connection:
                self.received.append(message)
        except Exception:  # aborted or closed without a close frame: the connection is over
            pass

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if urlsplit(request.path).path != "/subscribe":
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        if self._refuse_next > 0:
            self._refuse_next -= 1
            self.refused += 1
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "overloaded\n")
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        assert connection.request is not None
        query = parse_qs(urlsplit(connection.request.path).query)
        self.connections.append(query)
        wanted = set(query.get("wantedCollections", []))
        cursor = int(query["cursor"][0]) if "cursor" in query else None
        index = len(self._items) if cursor is None else next(
            (i for i, item in enumerate(self._items) if item[0] > cursor), len(self._items))
        self._live.add(connection)
        closed = asyncio.ensure_future(self._record_received(connection))
        try:
            while not closed.done():
                while index < len(self._items):
                    _, message, collection = self._items[index]
                    index += 1
                    if collection is None or not wanted or collection in wanted:
                        await connection.send(message)
                assert self._grew is not None
                grew = asyncio.ensure_future(self._grew.wait())
                await asyncio.wait({grew, closed}, return_when=asyncio.FIRST_COMPLETED)
                grew.cancel()
        except Exception:  # the client went away mid-send
            pass
        finally:
            self._live.discard(connection)
            closed.cancel()


def _collection(event: dict[str, Any]) -> str | None:
    commit = event.get("commit")
    return commit.get("collection") if event.get("kind") == "commit" and isinstance(commit, dict) else None
