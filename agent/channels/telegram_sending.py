"""Sending on Telegram: every message as plain text with no link preview, each Bot API call
retried boundedly, and "typing…" shown while a turn runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from telegram import Bot, LinkPreviewOptions
from telegram.constants import ChatAction
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError

log = logging.getLogger("safeclaw.agent.telegram")
T = TypeVar("T")
# Every message goes as plain text with no link preview: a reply can quote a stranger's post, and
# Markdown would turn `[Account locked](https://evil…)` into a live link that hides its address.
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
TYPING_EVERY = 4.0  # seconds; Telegram shows a chat action for about 5
MAX_RETRY_AFTER = 60.0  # longest flood wait honoured before giving up on a message


def retry_after_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # v22 warns that the int form of retry_after is going away
        warnings.simplefilter("ignore")
        value: int | float | timedelta = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


async def with_retry(call: Callable[[], Awaitable[T]], attempts: int, base_delay: float) -> T:
    """Retry network errors (with backoff) and 429s (after the wait Telegram asks), boundedly.

    A timed-out send may have arrived; retrying it risks a duplicate, which beats a lost reply.
    """
    delay = base_delay
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except RetryAfter as exc:
            wait, error = retry_after_seconds(exc), str(exc)
            if wait > MAX_RETRY_AFTER or attempt == attempts:
                raise
        except BadRequest:
            raise
        except NetworkError as exc:  # TimedOut included
            if attempt == attempts:
                raise
            wait, delay, error = delay, min(delay * 2, 30.0), str(exc)
        log.warning("Telegram send failed (%s); retry %d/%d in %.1fs", error, attempt, attempts - 1, wait)
        await asyncio.sleep(wait)
    raise AssertionError("unreachable")


@contextlib.asynccontextmanager
async def typing(bot: Bot, chat_id: int) -> AsyncIterator[None]:
    """'typing…' in the chat, renewed until the block ends."""

    async def show_typing() -> None:
        with contextlib.suppress(TelegramError):
            await bot.send_chat_action(chat_id, ChatAction.TYPING)

    async def keep_typing() -> None:
        while True:
            await asyncio.sleep(TYPING_EVERY)
            await show_typing()

    await show_typing()
    task = asyncio.create_task(keep_typing(), name=f"telegram-typing-{chat_id}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
