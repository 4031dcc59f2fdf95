"""Shared pieces of the Telegram channel tests: settings pointed at the fake, a recording echo handler."""

from __future__ import annotations

import asyncio
import contextlib
import os

from agent.channels.base import IncomingMessage
from agent.channels.telegram import TelegramChannel
from agent.config.settings import settings_from_config

OWNER = 111
STRANGER = 666


def make_settings(fake, tmp_path, allowed=(OWNER,), token=None, allow_groups=None, **extra_env):
    env = dict(os.environ)
    env.update(TELEGRAM_BOT_TOKEN=token or fake.token, TELEGRAM_API_BASE=fake.url, **extra_env)
    data = {
        "llm": {"provider": "scripted", "model": "scripted"},
        "channels": {"telegram": {"enabled": True, "allowed_user_ids": list(allowed)}},
    }
    if allow_groups is not None:
        data["channels"]["telegram"]["allow_groups"] = allow_groups
    return settings_from_config(data, tmp_path / "config.json", env)


def make_telegram_settings(fake, tmp_path, **kwargs):
    return make_settings(fake, tmp_path, **kwargs).channels.telegram


class Echo:
    """An agent stand-in: records each message and answers `reply(text)` (default: 'echo: <text>')."""

    def __init__(self, reply=None):
        self.seen: list[IncomingMessage] = []
        self.reply = reply or (lambda text: f"echo: {text}")

    async def __call__(self, message: IncomingMessage) -> str:
        self.seen.append(message)
        return self.reply(message.text)


def make_channel(fake, tmp_path, handler=None, service=None, **kwargs):
    channel = TelegramChannel(handler or Echo(), make_telegram_settings(fake, tmp_path, **kwargs), service)
    channel.retry_base_delay = 0.01
    return channel


@contextlib.asynccontextmanager
async def running(channel, fake):
    """Start the channel, wait until it polls, and stop it (and wait for it) on the way out."""
    polls_before = len(fake.calls_of("getUpdates"))
    task = asyncio.create_task(channel.start())
    def polling():
        return len(fake.calls_of("getUpdates")) > polls_before or task.done()

    await asyncio.to_thread(fake.wait_until, polling)
    if task.done():
        task.result()
    try:
        yield task
    finally:
        await channel.stop()
        await task


async def wait_for(fake, predicate, timeout=20.0):
    return await asyncio.to_thread(fake.wait_until, predicate, timeout)
