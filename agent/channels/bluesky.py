"""The Bluesky listener: the agent hears posts that mention its owner or reply to the owner's posts.

It reads Bluesky's Jetstream (created posts only, `agent/channels/jetstream.py`) and keeps the posts
that mention a watched DID or reply to a post of one, skipping the watched accounts' own posts.
Each becomes one turn, `bluesky:<author did>`, marked as written by that author and not by the
owner: the loop fences its text as data. Turns run one at a time, in the order posts arrived.

It only listens. The reply a turn returns is logged by `send()` and posted nowhere: a public
answer happens only when the LLM asks the router for one (CREATE_POST with reply_to), under the
router's policy, rate limits and kill switch. The agent holds no Bluesky credential.

config.json, `channels.bluesky`: `enabled`; `watch`, the owner's account DIDs (did:plc:…), not
handles: a handle can be changed or taken over by someone else, a DID cannot; `max_per_hour`
(default 20): more posts than that in an hour are counted, logged and dropped, so a flood of
mentions cannot become a flood of LLM turns; `jetstream_url` (env BSKY_JETSTREAM_URL wins).

Backpressure: the reader only filters (`PostFilter`, far faster than the firehose) and puts the
posts for the owner in a queue of at most `QUEUE_SIZE` that drops its oldest post when full, so
a burst never blocks the WebSocket reader and the newest posts win; each drop is counted and
logged. The hourly cap applies when a post's turn would start. If Jetstream cannot be reached
the listener retries with backoff (1 s doubling to 60 s) and the other channels run meanwhile. An
error while handling one event or one turn is logged, and the listener goes on.

Resume: the last `time_us` done is saved and sent as `cursor` on every (re)connection
(`bluesky_cursor.py`); events at or before it are skipped if a server replays them. `stop()`
closes the socket at once, lets a turn already running finish (its cursor is saved) and leaves
posts not yet started to the next start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from agent.channels.base import BaseChannel, IncomingMessage, MessageHandler
from agent.channels.bluesky_cursor import STATE_FILE, ResumeCursor
from agent.channels.drop_oldest import DropOldestQueue
from agent.channels.jetstream import MalformedEvent, Post, PostFilter, subscribe_url
from agent.channels.run_state import ChannelRun
from agent.errors import ConfigError
from protocol.origin import STRANGER, Origin, clip

if TYPE_CHECKING:
    from agent.config.channel_sections import BlueskySettings
    from agent.workspace.folder import Workspace

log = logging.getLogger("safeclaw.agent.bluesky")
HOUR = 3600.0
QUEUE_SIZE = 50  # posts waiting for their turn; the oldest is dropped when a new one arrives
RESOLVE_HINT = "https://bsky.social/xrpc/com.atproto.identity.resolveHandle?handle=<your handle>"


class HourlyCap:
    """At most `limit` admissions in any hour (a sliding window)."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._admitted: deque[float] = deque()

    def admit(self) -> bool:
        now = self.clock()
        while self._admitted and now - self._admitted[0] >= HOUR:
            self._admitted.popleft()
        if len(self._admitted) >= self.limit:
            return False
        self._admitted.append(now)
        return True


class BlueskyListener(BaseChannel):
    name = "bluesky"
    retry_base_delay = 1.0  # seconds, doubled after each failed connection
    retry_max_delay = 60.0
    close_timeout = 2.0

    def __init__(
        self, handle: MessageHandler, config: BlueskySettings, state_path: Path,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(handle)
        self.config = config
        self.resume = ResumeCursor(state_path, clock)
        self.cap = HourlyCap(config.max_per_hour, clock)
        self.dropped_over_cap = 0
        self.dropped_from_queue = 0
        self.skipped_malformed = 0
        self.failed_events = 0  # events whose handling raised an unexpected error (logged)
        self.connection_attempts = 0
        self._posts: DropOldestQueue[tuple[int, Post]] = DropOldestQueue(QUEUE_SIZE)
        self._filter = PostFilter(config.watch)
        self._queue_drops = 0  # drops since the queue last had room
        self._dropping = 0  # drops since the cap last let a post through
        self._busy = False
        self._outage = False  # set from a failed connection until an event arrives again
        self.run = ChannelRun()

    @classmethod
    def from_settings(cls, handle: MessageHandler, settings: BlueskySettings, workspace: Workspace
                      ) -> BlueskyListener:
        if not settings.watch:
            raise ConfigError(f"{settings.where}: 'channels.bluesky.watch' must list your account's DID, "
                              f'e.g. ["did:plc:abc123"]; find it at {RESOLVE_HINT}')
        return cls(handle, settings, workspace.root / STATE_FILE)

    @property
    def cursor(self) -> int | None:
        """Every Jetstream event up to this time_us is done."""
        return self.resume.cursor

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        if self.run.stop_requested.is_set():
            return
        self.resume.load()
        self.run.begin()
        reader = asyncio.create_task(self._read_forever(), name="bluesky-reader")
        worker = asyncio.create_task(self._answer_posts(), name="bluesky-worker")
        stopper = asyncio.create_task(self.run.stop_requested.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            failure = reader.exception() if reader.done() and not reader.cancelled() else None
            for task in (reader, stopper):
                task.cancel()
            if not self._busy:
                worker.cancel()  # waiting for a post; a turn under way is let finish
            await asyncio.gather(reader, stopper, worker, return_exceptions=True)
            self.resume.save()
            self.run.end()
            log.info("Bluesky listener stopped at cursor %s", self.cursor)
        if failure is not None:
            raise failure

    async def stop(self) -> None:
        await self.run.stop()

    async def send(self, conversation: str, text: str) -> None:
        """Log the reply only: this channel never posts (public actions go through the router)."""
        log.info("Bluesky: reply for %s kept in the history, not posted: %.300s", conversation, text)

    # --- reading --------------------------------------------------------------------------
    async def _read_forever(self) -> None:
        """Connect, read, and on any failure reconnect from the cursor with bounded backoff."""
        delay = self.retry_base_delay
        self._outage = False
        while not self.run.stop_requested.is_set():
            url = subscribe_url(self.config.jetstream_url, self.cursor)
            self.connection_attempts += 1
            try:
                async with connect(url, max_size=2**20, close_timeout=self.close_timeout) as socket:
                    log.info("Bluesky: listening on Jetstream for %d watched account(s) from cursor %s",
                             len(self.config.watch), self.cursor)
                    async for raw in socket:
                        if self._outage:
                            log.info("Bluesky: Jetstream is back; the outage is over")
                            self._outage, delay = False, self.retry_base_delay
                        self._read_guarded(raw)
                    reason = f"Jetstream closed the connection (code {socket.close_code})"
            except (OSError, TimeoutError, WebSocketException) as exc:
                reason = f"{type(exc).__name__}: {exc}"
            if not self._outage:  # once per outage; the retries are logged at debug level
                log.warning("Bluesky: %s; reconnecting from cursor %s with backoff", reason, self.cursor)
                self._outage = True
            else:
                log.debug("Bluesky: still no Jetstream (%s); next try in %.1fs", reason, delay)
            await self.run.pause(delay)
            delay = min(delay * 2, self.retry_max_delay)

    def _read_guarded(self, raw: str | bytes) -> None:
        """One event; an unexpected error on it is logged and skipped, never the end of the reader."""
        try:
            self._read_one(raw)
        except Exception:
            self.failed_events += 1
            log.exception("Bluesky: could not handle a Jetstream event (%d so far); skipped",
                          self.failed_events)

    def _read_one(self, raw: str | bytes) -> None:
        try:
            event = self._filter.read(raw)
        except MalformedEvent as exc:
            self.skipped_malformed += 1
            log.warning("Bluesky: skipped a malformed Jetstream event (%s)", exc)
            if exc.time_us is not None:
                self.resume.event_done(exc.time_us)
            return
        if self.resume.is_replay(event.time_us):
            return  # replayed from the cursor: already read
        if event.post is not None:
            self.resume.post_read(event.time_us)
            dropped = self._posts.put((event.time_us, event.post))  # never waits
            if dropped is not None:
                self._drop_queued(*dropped)
            elif self._queue_drops:
                self._queue_drops = 0
            return
        self.resume.event_done(event.time_us)

    def _drop_queued(self, time_us: int, post: Post) -> None:
        self.resume.post_dropped(time_us)
        self.dropped_from_queue += 1
        self._queue_drops += 1
        if self._queue_drops == 1:
            log.warning("Bluesky: more than %d posts wait for a turn; dropping the oldest", QUEUE_SIZE)
        log.info("Bluesky: dropped %s by %s (the queue was full)", post.uri, post.author)

    def _admit(self, post: Post) -> bool:
        if self.cap.admit():
            if self._dropping:
                log.warning("Bluesky: %d post(s) over the cap of %d an hour were dropped",
                            self._dropping, self.config.max_per_hour)
                self._dropping = 0
            return True
        self.dropped_over_cap += 1
        self._dropping += 1
        if self._dropping == 1:
            log.warning("Bluesky: more than %d posts for the owner this hour; dropping the excess "
                        "until the hour allows more", self.config.max_per_hour)
        log.info("Bluesky: dropped %s by %s (over the hourly cap)", post.uri, post.author)
        return False

    # --- answering ------------------------------------------------------------------------
    async def _answer_posts(self) -> None:
        """One turn at a time, in arrival order, within the hourly cap; the cursor is saved after each."""
        while not self.run.stop_requested.is_set():
            time_us, post = await self._posts.get()
            self._busy = True
            try:
                if self._admit(post):
                    await self._answer(post)
            except Exception:  # a bug around one post must not end the worker
                log.exception("Bluesky: handling %s failed; moving on", post.uri)
            finally:
                self._busy = False
            # Not reached when cancelled mid-turn: that post is then read again on the next start.
            self.resume.post_done(time_us)

    async def _answer(self, post: Post) -> None:
        message = mention_message(self.name, post)
        log.info("Bluesky: %s by %s addresses the owner", post.uri, post.author)
        try:
            reply = await self.handle(message)
        except Exception:  # one bad turn must not stop the listener, nor be retried forever
            log.exception("Bluesky: the turn for %s failed; moving on", post.uri)
            return
        await self.send(message.conversation, reply)


def mention_message(channel: str, post: Post) -> IncomingMessage:
    """A mention as the agent takes it: a turn someone else wrote, named by its author's DID (who
    its replies and its share of the LLM budget belong to)."""
    return IncomingMessage(
        channel=channel, conversation=f"bluesky:{post.author}", user_id=post.author, text=post.text,
        outside_author=f"{post.author} on Bluesky (post {post.uri})",
        source=Origin(STRANGER, "mention", author=clip(post.author, 300), platform="bsky",
                      post=clip(post.uri, 300)),
    )
