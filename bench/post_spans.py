"""Where one post's time goes in a router: the router's functions of `SPANS` wrapped with wall-clock
timers while a bench runs (bench/router_post.py), and the Redis round trips each thread makes."""

from __future__ import annotations

import importlib
import statistics
import threading
import time
from typing import Any

import redis

# Where one post's time goes in the router: wall time per post inside these functions, nested
# (the lane's work includes the read ahead, the read ahead the bounds, the bounds the duplicate
# guard, the skill Mastodon.py's call). (label, module, class or "", function)
SPANS: tuple[tuple[str, str, str, str], ...] = (
    ("lane: triage, policy, audit, run, records (all below)", "router.queue.triage", "Decider", "decide"),
    ("  read ahead, one round trip: stored reply, intent, kill switch, the claim's script with the bounds",
     "router.queue.triage", "Decider", "_read_ahead"),
    ("    hard bounds queued (answers settled in the read ahead)", "router.bounds.guard", "HardBounds",
     "stage_check"),
    ("      duplicate guard: trigrams, queued with the others", "router.bounds.duplicates", "DuplicateGuard",
     "stage"),
    ("    duplicate guard: compared with the history", "router.bounds.duplicates", "DuplicateGuard",
     "_settle"),
    ("  policy checks, in their order (the bounds' answers read ahead)", "router.policy.checks", "Policy",
     "decide"),
    ("  audit line before the post (durable)", "router.audit.recorder", "AuditRecorder", "started"),
    ("    of which fdatasync", "router.audit.log", "", "_datasync"),
    ("  the skill: CREATE_POST on the kept client", "router.pipeline", "Pipeline", "run"),
    ("    Mastodon.py status_post (the floor's own call)", "mastodon", "Mastodon", "status_post"),
    ("  bounds' record after the post", "router.policy.checks", "Policy", "record"),
    ("  audit line of the answer", "router.audit.recorder", "AuditRecorder", "command"),
    ("  reply, record and audit mirror written (Redis)", "router.queue.results", "ResultWriter", "finish"),
    ("    the reply redacted, the record built", "router.queue.results", "ResultWriter", "_prepare"),
    ("    the round trip", "router.queue.results", "ResultWriter", "write"),
    ("loop: decode and plan", "router.pipeline", "Pipeline", "plan"),
)


class Spans:
    """Wall time spent inside each of `SPANS` (its functions wrapped while the bench runs), and the
    Redis round trips each thread made."""

    def __init__(self) -> None:
        self.calls: dict[str, list[float]] = {label: [] for label, *_ in SPANS}
        self.round_trips: dict[str, int] = {"lane": 0, "loop": 0}  # the bench's own (MainThread) not counted
        self.round_trip_seconds = 0.0  # the lanes' only: the loop's include its wait for commands
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, label: str | None) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return original(*args, **kwargs)
            finally:
                spent = (time.perf_counter_ns() - start) / 1e9
                if label is not None:
                    self.calls[label].append(spent)
                elif threading.current_thread() is not threading.main_thread():
                    lane = threading.current_thread().name.startswith("lane-")
                    self.round_trips["lane" if lane else "loop"] += 1
                    self.round_trip_seconds += spent if lane else 0.0

        setattr(owner, name, timed)
        self._undo.append((owner, name, original))

    def per_post(self, posts: int) -> dict[str, dict[str, float]]:
        """Each span's mean ms per post, its calls per post and the median ms of one call."""
        return {label: {"mean_ms_per_post": round(sum(spent) / posts * 1000, 3),
                        "calls_per_post": round(len(spent) / posts, 2),
                        "p50_ms_per_call": round(statistics.median(spent) * 1000, 3) if spent else 0.0}
                for label, spent in self.calls.items()}

    def __enter__(self) -> Spans:
        for label, module, cls, function in SPANS:
            imported = importlib.import_module(module)
            self.wrap(getattr(imported, cls) if cls else imported, function, label)
        self.wrap(redis.Redis, "execute_command", None)  # a pipeline's commands are queued, not sent
        self.wrap(redis.client.Pipeline, "execute", None)
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
