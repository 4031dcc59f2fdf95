"""One thread for a router's deadlines (`router.queue.timers`): due ones run, cancelled ones never,
and an action that waits holds back no other deadline."""

from __future__ import annotations

import threading

from router.queue.timers import Timers


def test_due_deadlines_run_in_their_order_and_cancelled_ones_never():
    timers, ran, done = Timers("test-deadlines"), [], threading.Event()
    cancelled = [timers.after(0.05, ran.append, f"cancelled {n}") for n in range(50)]
    for name, seconds in (("third", 0.3), ("first", 0.1), ("second", 0.2)):
        timers.after(seconds, ran.append, name)
    timers.after(0.4, lambda: done.set())
    for deadline in cancelled:
        deadline.cancel()
    assert done.wait(30)
    assert ran == ["first", "second", "third"]
    assert timers.pending() == 0  # the cancelled ones were dropped when they came up


def test_one_thread_waits_for_every_deadline():
    timers = Timers("test-one-thread")
    before = threading.active_count()
    deadlines = [timers.after(60, print, n) for n in range(200)]
    assert threading.active_count() == before + 1
    for deadline in deadlines:
        deadline.cancel()
        assert deadline.args == ()  # nothing of the command is kept until its time


def test_an_action_that_waits_holds_back_no_other_deadline():
    timers, release, later = Timers("test-waits"), threading.Event(), threading.Event()
    timers.after(0.01, release.wait, 60)  # an answer stuck while Redis is down
    timers.after(0.1, later.set)
    assert later.wait(30)
    release.set()


def test_an_earlier_deadline_added_later_is_not_held_back_by_a_later_one():
    timers, soon = Timers("test-earlier"), threading.Event()
    timers.after(3600, print, "an hour")
    timers.after(0.05, soon.set)
    assert soon.wait(30)


def test_an_action_that_raises_leaves_the_timers_working():
    timers, after = Timers("test-raises"), threading.Event()
    timers.after(0.01, lambda: 1 / 0)
    timers.after(0.05, after.set)
    assert after.wait(30)
