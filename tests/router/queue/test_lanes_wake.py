"""A command wakes one idle thread of its own lane, never the idle threads of other platforms'
lanes; a shutdown still wakes them all and waits for the running ones."""

from __future__ import annotations

import threading
import time

from router.queue.lanes import Lanes


class CountingCondition(threading.Condition):
    def __init__(self, lock) -> None:
        super().__init__(lock)
        self.waiting = 0
        self.wakes = 0

    def wait(self, timeout=None):
        self.waiting += 1
        try:
            return super().wait(timeout)
        finally:
            self.waiting -= 1
            self.wakes += 1


def settled(condition: CountingCondition, waiting: int) -> None:
    deadline = time.monotonic() + 30
    while condition.waiting != waiting:
        assert time.monotonic() < deadline, "the lane's threads never went idle"
        time.sleep(0.01)


def test_a_command_wakes_no_thread_of_another_lane_and_shutdown_wakes_all():
    lanes = Lanes(per_lane=2, backlog=10)
    ready = {name: CountingCondition(lanes._lock) for name in ("mastodon", "bsky")}
    lanes._ready.update(ready)
    for name in ready:
        ran = threading.Event()
        assert lanes.submit(name, ran.set)
        assert ran.wait(30)
        settled(ready[name], 1)
    before = ready["bsky"].wakes
    for _ in range(20):
        ran = threading.Event()
        assert lanes.submit("mastodon", ran.set)
        assert ran.wait(30)
    assert ready["bsky"].wakes == before  # bsky's idle thread slept through mastodon's commands
    assert ready["mastodon"].wakes >= 1

    release, started = threading.Event(), threading.Event()
    assert lanes.submit("mastodon", lambda: (started.set(), release.wait(30)))
    assert started.wait(30)
    threading.Timer(0.2, release.set).start()
    assert lanes.shutdown(grace=30) == 0  # it waited for the running command
    settled(ready["bsky"], 0)  # and the idle threads were woken to leave
    settled(ready["mastodon"], 0)
