"""Where the Bluesky listener resumes: the Jetstream `time_us` up to which every event is done.

It is kept in `bluesky_listener.json` in the workspace (written atomically) and sent as `cursor` on
every (re)connection, so a restart neither loses a post nor answers one twice. A post read but not
yet answered holds the cursor before it; the newest event read tells a replay from a new event.
A first start, with no saved cursor, listens from now.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.channels.jetstream import is_ahead, wall_clock_us
from agent.errors import ConfigError, StateFileError
from agent.workspace.folder import read_json, write_json_atomic

log = logging.getLogger("safeclaw.agent.bluesky")
STATE_FILE = "bluesky_listener.json"
SAVE_EVERY = 10.0  # seconds between cursor saves while only unrelated posts go by


class ResumeCursor:
    def __init__(self, state_path: Path, clock: Callable[[], float]) -> None:
        self.state_path = state_path
        self.clock = clock
        self.cursor: int | None = None  # every event up to this time_us is done
        self.last_seen: int | None = None  # newest time_us read; older replays are skipped
        self._pending: deque[int] = deque()  # time_us of posts queued or being answered, oldest first
        self._saved_at = 0.0

    def load(self) -> None:
        self.cursor = self.last_seen = self._read()

    def is_replay(self, time_us: int) -> bool:
        return self.last_seen is not None and time_us <= self.last_seen

    def post_read(self, time_us: int) -> None:
        """A post waits for its turn: the cursor stays before it until it is done or dropped."""
        self.last_seen = time_us
        self._pending.append(time_us)

    def post_dropped(self, time_us: int) -> None:
        self._pending.remove(time_us)

    def post_done(self, time_us: int) -> None:
        self._pending.remove(time_us)
        self.cursor = self._pending[0] - 1 if self._pending else self.last_seen
        self.save()

    def event_done(self, time_us: int) -> None:
        """An event that needs no turn: the cursor moves past it unless a post waits before it."""
        self.last_seen = max(self.last_seen or 0, time_us)
        if not self._pending:
            self.cursor = self.last_seen
            if self.clock() - self._saved_at >= SAVE_EVERY:
                self.save()

    def save(self) -> None:
        if self.cursor is None:
            return
        try:
            write_json_atomic(self.state_path, {"cursor": self.cursor})
        except OSError as exc:
            log.warning("Bluesky: cannot save the cursor to %s: %s", self.state_path, exc)
            return
        self._saved_at = self.clock()

    def _read(self) -> int | None:
        try:
            data: Any = read_json(self.state_path, {})
        except StateFileError as exc:
            raise ConfigError(f"the Bluesky listener cannot resume: {exc}") from None
        cursor = data.get("cursor") if isinstance(data, dict) else None
        if cursor is not None and (isinstance(cursor, bool) or not isinstance(cursor, int) or cursor <= 0):
            raise ConfigError(f"{self.state_path}: 'cursor' must be a positive whole number (unix "
                              "microseconds); fix it or delete the file to listen from now")
        if cursor is not None and is_ahead(cursor, wall_clock_us()):
            log.warning("Bluesky: the saved cursor %s is ahead of now (a malformed event saved it); "
                        "it is not used: listening from now", cursor)
            return None
        return cursor
