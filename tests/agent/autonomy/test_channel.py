"""`--channel autonomy`: a cycle every interval beside other channels, until stopped or max_cycles."""

from __future__ import annotations

import asyncio

from agent.channels.autonomy import AutonomyChannel
from tests.agent.autonomy.helpers import StandInRouter, make_cycle
from tests.support.eager_poster import EagerPoster


async def _unused(message):  # the autonomy channel takes no messages
    raise AssertionError("not called")


def ticking(cycle, clock) -> None:
    """Each cycle 60 s after the last on the injected clock (the 15 s floor holds)."""
    real = cycle.run_once

    def run_once():
        clock.now += 60
        return real()

    cycle.run_once = run_once


def test_the_channel_runs_cycles_until_max_cycles_then_ends(workspace):
    cycle, notices, clock = make_cycle(workspace, EagerPoster(), StandInRouter(), max_cycles=3)
    ticking(cycle, clock)
    channel = AutonomyChannel(_unused, cycle, interval=0.01)
    asyncio.run(asyncio.wait_for(channel.start(), timeout=20))
    assert cycle.files.load().cycle_count == 3
    assert notices[-1][1].startswith("autonomy stopped: max_cycles (3) reached")


def test_stop_ends_the_channel_between_cycles(workspace):
    cycle, _, _ = make_cycle(workspace, EagerPoster(), StandInRouter())
    channel = AutonomyChannel(_unused, cycle, interval=3600)

    async def run() -> None:
        task = asyncio.create_task(channel.start())
        while cycle.files.last_heartbeat() is None or cycle.files.load().cycle_count < 1:
            await asyncio.sleep(0.01)
        await channel.stop()
        await asyncio.wait_for(task, timeout=10)

    asyncio.run(run())
    assert cycle.files.load().cycle_count == 1


def test_a_failing_cycle_does_not_end_autonomy(workspace):
    cycle, _, clock = make_cycle(workspace, EagerPoster(), StandInRouter(), max_cycles=2)
    ticking(cycle, clock)
    runs = []
    real = cycle.run_once

    def flaky():
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("boom")
        return real()

    cycle.run_once = flaky  # type: ignore[method-assign]
    asyncio.run(asyncio.wait_for(AutonomyChannel(_unused, cycle, interval=0.01).start(), timeout=20))
    assert len(runs) == 4 and cycle.files.load().cycle_count == 2


def test_rule_injections_are_applied_between_cycles_within_the_poll(workspace):
    """An hour between cycles, yet the owner's rules are applied every `rules_poll` seconds."""
    cycle, _, _ = make_cycle(workspace, EagerPoster(), StandInRouter())
    applied: list[int] = []
    cycle.before_turn = lambda: applied.append(1)
    channel = AutonomyChannel(_unused, cycle, interval=3600, rules_poll=0.01)

    async def run() -> None:
        task = asyncio.create_task(channel.start())
        while len(applied) < 5:
            await asyncio.sleep(0.01)
        await channel.stop()
        await asyncio.wait_for(task, timeout=10)

    asyncio.run(asyncio.wait_for(run(), timeout=20))
    assert cycle.files.load().cycle_count == 1 and len(applied) >= 5
