"""A burst of distinct posts from several agent-side callers, and what a fault test asserts of it.

`Burst(url, keys)` sends `CREATE_POST`s to a fake Mastodon through the agent's real router client,
`THREADS` callers each on its own pool; `fault_at` (monotonic) marks when the fault was injected, so
`first_ok_after` says how long posting took to come back. `outcome(...)` checks the promises every
fault test makes (each reply ok, not sent or unknown; no command posted twice, counted by its
command id at the platform; every ok on the platform) and gives the figures to print.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from tests.router.router_helpers import OWNER_TURN

# A text's unique part, in letters that are no hex digit: a hex run may decode to text, and the
# router holds a post whose text may hide a secret for the owner's approval.
NOT_HEX = "ghijklmnopqrstuvwxyz"


def unique_texts(count: int, what: str = "post") -> list[str]:
    """`count` distinct post texts that no check of the router holds or refuses: each with a random
    part of its own, so no two are alike to the duplicate guard either."""
    return [f"{what} {n} {''.join(secrets.choice(NOT_HEX) for _ in range(24))}" for n in range(count)]


def not_sent(reply: dict) -> bool:
    """A reply that says the post was not made: an error saying so, or `expired` (never run)."""
    if reply["status"] == "expired":
        return True
    return reply["status"] == "error" and "not sent" in reply.get("message", "")


class Burst:
    def __init__(self, url: str, keys: Any, posts: int, threads: int = 6, timeout: float = 45) -> None:
        self.url, self.keys, self.timeout = url, keys, timeout
        self.texts = unique_texts(posts)
        self.replies: dict[str, dict] = {}
        self.first_ok_after: float | None = None
        self.fault_at: float | None = None
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(self.texts[i::threads],), daemon=True)
                         for i in range(threads)]

    def start(self) -> Burst:
        for thread in self._threads:
            thread.start()
        return self

    def join(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(timeout=max(0.1, deadline - time.monotonic()))

    def answered(self) -> int:
        with self._lock:
            return len(self.replies)

    def _run(self, texts: list[str]) -> None:
        client = RouterClient(redis_client(self.url), self.keys, timeout=self.timeout)
        try:
            for text in texts:
                sent_at = time.monotonic()
                params = {"platform": "mastodon", "text": text}
                reply = client.call("CREATE_POST", params, "burst", origin=OWNER_TURN)
                with self._lock:
                    self.replies[text] = reply
                    fault = self.fault_at
                    if fault is not None and sent_at > fault and reply["status"] == "ok" \
                            and self.first_ok_after is None:
                        self.first_ok_after = time.monotonic() - fault
        finally:
            client.conn.close()


@dataclass
class Outcome:
    counts: dict[str, int]
    posted: int
    first_ok_after: float | None
    errors: dict[str, int]  # the error kinds of the replies other than ok

    def line(self, what: str) -> str:
        after = f"{self.first_ok_after:.1f}s" if self.first_ok_after is not None else "never"
        return (f"\n{what}: {self.counts}; {self.posted} posted; first ok after the fault in {after}; "
                f"errors: {self.errors}")


def outcome(burst: Burst, mastodon: Any, not_sent_is_final: bool = True) -> Outcome:
    """Assert what every fault test promises; the figures. `not_sent_is_final` False: a split brain,
    where a `not sent` answered on the cut-off primary may be run later from the winner's queue
    (counted in the figures as `not sent, then run`, never run twice)."""
    assert len(burst.replies) == len(burst.texts), f"{len(burst.texts) - len(burst.replies)} posts got no reply"
    odd = {text: r for text, r in burst.replies.items() if r["status"] not in ("ok", "unknown") and not not_sent(r)}
    assert odd == {}, f"replies neither ok, not sent nor unknown: {odd}"
    requests = mastodon.posts()
    per_command = Counter(request.headers.get("idempotency-key") for request in requests)
    twice = {key: n for key, n in per_command.items() if n > 1}
    assert twice == {}, f"commands whose post request reached the platform more than once: {twice}"
    posted = [status["text"] for status in mastodon.statuses.values()]
    assert len(posted) == len(set(posted)), "a post made twice"
    assert set(posted) <= set(burst.texts)
    oks = {text for text, reply in burst.replies.items() if reply["status"] == "ok"}
    assert oks <= set(posted), "a post answered ok is not on the platform"
    sent = {text: reply for text, reply in burst.replies.items() if not_sent(reply) and text in posted}
    assert not not_sent_is_final or sent == {}, f"posts answered not sent are on the platform: {sent}"
    statuses = [reply["status"] if not not_sent(reply) else "not sent, then run" if text in sent else "not sent"
                for text, reply in burst.replies.items()]
    errors = Counter(f"{r['status']}:{r.get('error') or '-'}" for r in burst.replies.values() if r["status"] != "ok")
    return Outcome(dict(Counter(statuses)), len(posted), burst.first_ok_after, dict(errors))
