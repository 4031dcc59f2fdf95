"""Shared pieces of the Bluesky listener tests: the watched accounts, a recording handler, a
listener pointed at the fake Jetstream, and waits bounded by a hang guard."""

import asyncio
import contextlib
import json

from agent.channels.bluesky import BlueskyListener
from agent.channels.bluesky_cursor import STATE_FILE
from agent.config.channel_sections import BlueskySettings
from tests.support.fake_jetstream import post_event

OWNER = "did:plc:owner7tq3ewyfzbdkhypsthiw"
ALICE = "did:plc:alice2xq4gdd7skrh3kuxnbq"
BOB = "did:web:bob.example.com"
T = 1_730_000_000_000_000  # time_us of the first test event


class Recorder:
    """The agent's handler: records each message; counts how many turns ran at once."""

    def __init__(self, gates=()):
        self.messages = []
        self.running = 0
        self.most_at_once = 0
        self.gates = list(gates)  # asyncio.Events: turn n waits for gates[n], when there is one

    async def __call__(self, message):
        turn = len(self.messages) + self.running
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if turn < len(self.gates):
                await self.gates[turn].wait()
            await asyncio.sleep(0)
            self.messages.append(message)
            return f"reply to {message.text}"
        finally:
            self.running -= 1


def make_listener(fake, workspace, handler, max_per_hour=20, clock=None):
    config = BlueskySettings(True, frozenset({OWNER}), max_per_hour, fake.url)
    extra = {"clock": clock} if clock else {}
    listener = BlueskyListener(handler, config, workspace.root / STATE_FILE, **extra)
    listener.retry_base_delay = 0.01
    return listener


async def until(condition, what):
    """Wait for `condition` (a hang guard of 20 s, not a speed test)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


@contextlib.asynccontextmanager
async def running(listener, fake, connections=1):
    task = asyncio.create_task(listener.start())
    try:
        await until(lambda: len(fake.connections) >= connections, "the listener connected")
        yield task
    finally:
        await listener.stop()
        await task


def mention(rkey, time_us, author=ALICE, text=None):
    return post_event(author, rkey, text or f"hey @owner ({rkey})", time_us, mentions=[OWNER])


def saved_cursor(workspace):
    return json.loads((workspace.root / STATE_FILE).read_text())["cursor"]
