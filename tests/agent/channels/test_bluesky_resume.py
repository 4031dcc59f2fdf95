"""Where the Bluesky listener resumes: reconnections and restarts from the saved cursor, a stop
that lets the running turn finish, and a cursor that is corrupt or ahead of now."""

import asyncio
import io
import json
import logging
import os

import pytest

from agent.actions import local_actions
from agent.channels.bluesky import BlueskyListener
from agent.channels.bluesky_cursor import STATE_FILE
from agent.channels.console import ConsoleChannel
from agent.config.channel_sections import BlueskySettings
from agent.config.settings import load_settings
from agent.errors import ConfigError
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop
from agent.service import AgentService
from tests.agent.channels.bluesky_helpers import (
    BOB,
    OWNER,
    Recorder,
    T,
    make_listener,
    mention,
    running,
    saved_cursor,
    until,
)
from tests.support.fake_jetstream import post_event

FAR_FUTURE = 9_999_999_999_999_999_999


def test_a_dropped_connection_resumes_from_the_cursor_and_logs_the_outage_once(jetstream, workspace, caplog):
    caplog.set_level(logging.DEBUG, "safeclaw.agent.bluesky")
    handler = Recorder()
    listener = make_listener(jetstream, workspace, handler)

    async def scenario():
        async with running(listener, jetstream):
            jetstream.queue(mention("3kbefore", T), post_event(BOB, "3kunrelated", "hm", T + 1))
            await until(lambda: listener.cursor == T + 1, "the first events were read")
            jetstream.refuse_next(3)
            jetstream.drop_connections()
            await until(lambda: len(jetstream.connections) == 2, "the listener reconnected")
            jetstream.queue(mention("3kafter", T + 2))
            await until(lambda: listener.cursor == T + 2, "the mention after the outage was read")

    asyncio.run(scenario())
    assert jetstream.refused == 3
    assert jetstream.cursors() == [None, str(T + 1)]
    assert [m.text for m in handler.messages] == ["hey @owner (3kbefore)", "hey @owner (3kafter)"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "reconnecting from cursor" in warnings[0]
    assert sum("still no Jetstream" in r.getMessage() for r in caplog.records) == 3
    assert any("Jetstream is back" in r.getMessage() for r in caplog.records)


def test_a_restart_neither_loses_nor_repeats_a_post(jetstream, workspace):
    handler = Recorder()

    async def first_run():
        listener = make_listener(jetstream, workspace, handler)
        async with running(listener, jetstream):
            jetstream.queue(mention("3kone", T), post_event(BOB, "3kunrelated", "hm", T + 1))
            await until(lambda: listener.cursor == T + 1, "the first run read both events")
            # a server replaying the cursor's own event, and an older one; then a newer unrelated post
            jetstream.queue(mention("3kone", T), mention("3kolder", T - 5), post_event(BOB, "3ky", "so", T + 2))
            await until(lambda: listener.cursor == T + 2, "the first run read the replays")

    async def second_run():
        listener = make_listener(jetstream, workspace, handler)
        async with running(listener, jetstream, connections=2):
            await until(lambda: listener.cursor == T + 4, "the second run read what it missed")

    asyncio.run(first_run())
    assert saved_cursor(workspace) == T + 2
    jetstream.queue(mention("3ktwo", T + 3), post_event(BOB, "3kx", "meh", T + 4))  # while the agent is off
    asyncio.run(second_run())
    assert jetstream.cursors() == [None, str(T + 2)]
    assert [m.text for m in handler.messages] == ["hey @owner (3kone)", "hey @owner (3ktwo)"]
    assert saved_cursor(workspace) == T + 4


def test_stop_closes_the_socket_promptly(jetstream, workspace):
    listener = make_listener(jetstream, workspace, Recorder())

    async def scenario():
        task = asyncio.create_task(listener.start())
        await until(lambda: jetstream._live, "the listener connected")
        await asyncio.wait_for(listener.stop(), 10)
        assert task.done()
        await task
        await until(lambda: not jetstream._live, "the fake saw the socket close")
        await listener.stop()  # twice is fine

    asyncio.run(scenario())


def test_stop_closes_the_socket_and_lets_the_running_turn_finish(jetstream, workspace):
    gates = [asyncio.Event()]
    handler = Recorder(gates)
    listener = make_listener(jetstream, workspace, handler)

    async def scenario():
        task = asyncio.create_task(listener.start())
        await until(lambda: jetstream._live, "the listener connected")
        jetstream.queue(mention("3kslow", T), mention("3knext", T + 1))
        await until(lambda: handler.running == 1 and listener.resume.last_seen == T + 1, "a turn is under way")
        stopping = asyncio.create_task(listener.stop())
        await until(lambda: not jetstream._live, "the socket closed while the turn runs")
        assert not stopping.done()
        gates[0].set()
        await stopping
        await task

    asyncio.run(scenario())
    assert [m.text for m in handler.messages] == ["hey @owner (3kslow)"]  # 3knext is left for next time
    assert saved_cursor(workspace) == T


def test_stop_during_the_backoff_returns(workspace):
    config = BlueskySettings(True, frozenset({OWNER}), jetstream_url="ws://127.0.0.1:9/subscribe")  # nobody there
    listener = BlueskyListener(Recorder(), config, workspace.root / STATE_FILE)
    listener.retry_base_delay = 3600

    async def scenario():
        task = asyncio.create_task(listener.start())
        await until(lambda: listener._outage, "the first connection failed")
        await asyncio.wait_for(listener.stop(), 10)
        await task

    asyncio.run(scenario())


def test_the_console_runs_while_jetstream_is_unreachable_and_the_listener_backs_off(workspace, tmp_path):
    config = {"channels": {"bluesky": {"enabled": True, "watch": [OWNER]}}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    settings = load_settings({"SAFECLAW_CONFIG": str(tmp_path / "config.json"),
                              "SAFECLAW_WORKSPACE": str(workspace.root),
                              "BSKY_JETSTREAM_URL": "ws://127.0.0.1:9/subscribe"})  # nothing listens there
    read_end, write_end = os.pipe()
    stdin, stdout = os.fdopen(read_end, "r"), io.StringIO()
    llm = ScriptedLLM(["Hello, owner."])
    listeners = []

    class Service(AgentService):
        def make_channel(self, name):
            if name == "console":
                return ConsoleChannel(self.handle, stdin, stdout)
            channel = super().make_channel(name)
            channel.retry_base_delay = 0.01
            listeners.append(channel)
            return channel

    service = Service(settings, AgentLoop(workspace, llm, local_actions(), None))

    async def scenario():
        run = asyncio.create_task(service._run_channels(["console", "bluesky"]))
        os.write(write_end, b"hi\n")
        await until(lambda: stdout.getvalue() == "Hello, owner.\n", "the console answered")
        await until(lambda: listeners and listeners[0].connection_attempts >= 4, "the listener retried")
        os.close(write_end)  # end of input ends the agent
        return await asyncio.wait_for(run, 10)

    assert asyncio.run(scenario()) == 0
    assert listeners[0]._outage


def test_a_corrupt_state_file_stops_the_listener_with_a_fix(jetstream, workspace):
    (workspace.root / STATE_FILE).write_text('{"cursor": "yesterday"}')
    listener = make_listener(jetstream, workspace, Recorder())
    with pytest.raises(ConfigError, match="delete the file to listen from now"):
        asyncio.run(listener.start())
    assert jetstream.connections == []


def test_an_event_stamped_far_ahead_of_now_is_not_taken_as_the_cursor(jetstream, workspace, caplog):
    """Issue 19, item 13: one event with time_us 9,999,999,999,999,999,999 became the cursor, and
    every later mention was dropped, on every restart."""
    handler = Recorder()

    async def scenario():
        listener = make_listener(jetstream, workspace, handler)
        async with running(listener, jetstream):
            future = mention("3kfuture", T)
            future["time_us"] = FAR_FUTURE
            unrelated = post_event(BOB, "3kz", "so", T)
            unrelated["time_us"] = FAR_FUTURE
            jetstream.queue(future, unrelated, mention("3kreal", T + 1))
            await until(lambda: len(handler.messages) == 1, "the real mention was answered")
            await until(lambda: listener.cursor == T + 1, "the cursor moved to the real mention")

    asyncio.run(scenario())
    assert [m.text for m in handler.messages] == ["hey @owner (3kreal)"]
    assert saved_cursor(workspace) == T + 1


def test_a_saved_cursor_ahead_of_now_is_refused_and_the_listener_starts_from_now(jetstream, workspace, caplog):
    (workspace.root / STATE_FILE).write_text(json.dumps({"cursor": FAR_FUTURE}))
    listener = make_listener(jetstream, workspace, Recorder())

    async def scenario():
        async with running(listener, jetstream):
            pass

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert jetstream.cursors() == [None]
    assert "ahead of now" in caplog.text
