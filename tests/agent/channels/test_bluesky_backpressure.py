"""The Bluesky listener under a flood: one turn at a time, a queue that drops its oldest post,
and the hourly cap."""

import asyncio
import logging

from agent.channels.bluesky import QUEUE_SIZE
from tests.agent.channels.bluesky_helpers import (
    BOB,
    Recorder,
    T,
    make_listener,
    mention,
    running,
    saved_cursor,
    until,
)
from tests.support.fake_jetstream import post_event


def test_the_hourly_cap_drops_the_excess_and_logs_it(jetstream, workspace, caplog):
    caplog.set_level(logging.INFO, "safeclaw.agent.bluesky")
    now = [1000.0]
    handler = Recorder()
    listener = make_listener(jetstream, workspace, handler, max_per_hour=2, clock=lambda: now[0])

    async def scenario():
        async with running(listener, jetstream):
            jetstream.queue(*[mention(f"3kflood{i}", T + i) for i in range(5)])
            await until(lambda: listener.cursor == T + 4, "the flood was read")
            now[0] += 3600
            jetstream.queue(mention("3klater", T + 10))
            await until(lambda: listener.cursor == T + 10, "the later mention was read")

    asyncio.run(scenario())
    assert [m.text for m in handler.messages] == ["hey @owner (3kflood0)", "hey @owner (3kflood1)",
                                                  "hey @owner (3klater)"]
    assert listener.dropped_over_cap == 3
    messages = [r.getMessage() for r in caplog.records]
    assert sum("dropping the excess" in m for m in messages) == 1
    assert sum("over the hourly cap" in m for m in messages) == 3
    assert any("3 post(s) over the cap of 2 an hour were dropped" in m for m in messages)


def test_turns_run_one_at_a_time_and_the_cursor_never_passes_a_waiting_post(jetstream, workspace):
    gates = [asyncio.Event(), asyncio.Event()]
    handler = Recorder(gates)
    listener = make_listener(jetstream, workspace, handler)

    async def scenario():
        async with running(listener, jetstream):
            try:
                jetstream.queue(mention("3k0", T), mention("3k1", T + 1), post_event(BOB, "3kx", "meh", T + 2))
                await until(lambda: handler.running == 1 and listener.resume.last_seen == T + 2, "all were read")
                assert listener.cursor is None  # nothing is done while the first turn runs
                gates[0].set()
                await until(lambda: len(handler.messages) == 1 and handler.running == 1, "turn 2 began")
                assert listener.cursor == T and saved_cursor(workspace) == T  # not T + 2: 3k1 is not done
                gates[1].set()
                await until(lambda: listener.cursor == T + 2, "both were answered")
            finally:
                for gate in gates:
                    gate.set()

    asyncio.run(scenario())
    assert handler.most_at_once == 1
    assert [m.text for m in handler.messages] == ["hey @owner (3k0)", "hey @owner (3k1)"]
    assert saved_cursor(workspace) == T + 2


def test_a_burst_never_blocks_the_reader_and_the_newest_fifty_win(jetstream, workspace, caplog):
    caplog.set_level(logging.INFO, "safeclaw.agent.bluesky")
    gates = [asyncio.Event()]
    handler = Recorder(gates)
    listener = make_listener(jetstream, workspace, handler, max_per_hour=1000)
    burst = [mention(f"3kburst{i}", T + i) for i in range(120)]

    async def scenario():
        async with running(listener, jetstream):
            try:
                jetstream.queue(burst[0])
                await until(lambda: handler.running == 1, "the first turn began")
                jetstream.queue(*burst[1:], post_event(BOB, "3kafter", "unrelated", T + 500))
                # The first turn is stuck, yet the reader reads the whole burst and what follows.
                await until(lambda: listener.resume.last_seen == T + 500, "the reader read past the burst")
                assert handler.running == 1
                assert len(listener._posts) == QUEUE_SIZE
                gates[0].set()
                await until(lambda: listener.cursor == T + 500, "the queue was answered")
            finally:
                gates[0].set()

    asyncio.run(scenario())
    answered = [m.text for m in handler.messages]
    newest = [f"hey @owner (3kburst{i})" for i in range(120 - QUEUE_SIZE, 120)]
    assert answered == ["hey @owner (3kburst0)", *newest]
    assert listener.dropped_from_queue == 120 - 1 - QUEUE_SIZE
    messages = [r.getMessage() for r in caplog.records]
    assert sum("dropping the oldest" in m for m in messages) == 1
    assert sum("(the queue was full)" in m for m in messages) == listener.dropped_from_queue
    assert saved_cursor(workspace) == T + 500


def test_the_hourly_cap_still_holds_behind_the_queue(jetstream, workspace):
    gates = [asyncio.Event()]
    handler = Recorder(gates)
    listener = make_listener(jetstream, workspace, handler, max_per_hour=3, clock=lambda: 1000.0)

    async def scenario():
        async with running(listener, jetstream):
            try:
                jetstream.queue(mention("3kcap0", T))
                await until(lambda: handler.running == 1, "the first turn began")
                jetstream.queue(*[mention(f"3kcap{i}", T + i) for i in range(1, 80)])
                await until(lambda: listener.resume.last_seen == T + 79, "the burst was read")
                gates[0].set()
                await until(lambda: listener.cursor == T + 79, "the queue was worked through")
            finally:
                gates[0].set()

    asyncio.run(scenario())
    assert [m.text for m in handler.messages] == [f"hey @owner (3kcap{i})" for i in (0, 30, 31)]
    assert listener.dropped_over_cap == QUEUE_SIZE - 2
    assert listener.dropped_from_queue == 80 - 1 - QUEUE_SIZE
