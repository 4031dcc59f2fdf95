"""Failed logins per client address: past a limit in a window, that address gets 429 until the
window ends, even with the right token (so a guesser learns nothing more). Bounded memory."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

MAX_FAILURES = 20  # wrong or missing tokens from one address...
WINDOW_SECONDS = 60.0  # ...within this many seconds
MAX_CLIENTS = 10_000  # addresses remembered (the oldest is forgotten first)


class FailedLogins:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._seen: OrderedDict[str, tuple[float, int]] = OrderedDict()  # address -> (window start, count)

    def _current(self, client: str) -> tuple[float, int]:
        start, count = self._seen.get(client, (self.clock(), 0))
        if self.clock() - start > WINDOW_SECONDS:
            return self.clock(), 0
        return start, count

    def blocked(self, client: str) -> float:
        """Seconds until `client` may try again (0 when it may now)."""
        start, count = self._current(client)
        return max(0.0, start + WINDOW_SECONDS - self.clock()) if count >= MAX_FAILURES else 0.0

    def failed(self, client: str) -> None:
        start, count = self._current(client)
        self._seen[client] = (start, count + 1)
        self._seen.move_to_end(client)
        while len(self._seen) > MAX_CLIENTS:
            self._seen.popitem(last=False)
