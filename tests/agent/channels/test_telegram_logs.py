"""The bot token is part of every Bot API URL: it must never reach a log line."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent.logs import setup_logging
from tests.agent.channels.telegram_helpers import OWNER, STRANGER, Echo, make_channel, running, wait_for
from tests.support.fake_telegram import FakeTelegram, dropped_connection, server_error, too_many_requests

NOISY = ("httpx", "httpcore", "telegram")


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(logging.Formatter("%(name)s %(levelname)s %(message)s").format(record))


@pytest.fixture
def agent_logging(tmp_path):
    """The agent's own logging set-up, with a raw DEBUG capture placed before its redacting handlers."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, {name: logging.getLogger(name).level for name in NOISY})
    capture = Capture()

    def setup(secrets):
        setup_logging(tmp_path / "agent.log", secrets)
        root.setLevel(logging.DEBUG)
        root.handlers.insert(0, capture)  # sees each record before any redaction
        return capture

    yield setup
    for handler in list(root.handlers):
        root.removeHandler(handler)
        if handler is not capture:
            handler.close()
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


def test_the_bot_token_never_appears_in_the_logs(tmp_path, agent_logging):
    with FakeTelegram() as fake:
        channel = make_channel(fake, tmp_path, Echo(lambda _: "a *broken reply"))
        capture = agent_logging([channel.settings.bot_token])
        fake.fail_next("getUpdates", server_error(), dropped_connection())
        fake.fail_next("sendMessage", too_many_requests(1), dropped_connection())
        fake.push_message(STRANGER, STRANGER, "hello?")
        fake.push_message(OWNER, OWNER, "hi")

        async def scenario():
            async with running(channel, fake):
                await wait_for(fake, lambda: fake.sent_texts(OWNER))

        asyncio.run(scenario())
        secret = fake.token.split(":")[1]

    log_file = (tmp_path / "agent.log").read_text()
    raw = "\n".join(capture.lines)
    # The run did log the failures it went through, so the check below is not vacuous.
    assert "refused a message from user id 666" in raw
    assert "Telegram send failed" in raw and "polling failed" in raw
    assert "refused a message" in log_file
    assert secret not in raw
    assert secret not in log_file
