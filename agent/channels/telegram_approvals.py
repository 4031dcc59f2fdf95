"""Approvals on Telegram: a request the router holds shows Approve and Deny buttons in the
owner's private chat (and only there); a press relays the owner's decision through the agent's
approval desk, which needs the router's one-time code (so the bot alone can never approve).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from telegram import Chat, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import TelegramError

from agent.channels.telegram_sending import NO_PREVIEW
from agent.channels.text_split import split_message

log = logging.getLogger("safeclaw.agent.telegram")
BUTTON_DATA = re.compile(r"^approval:(approve|deny):([0-9a-f]{32})$")


class OwnerBot(Protocol):
    """What of the Telegram channel the approvals use (`agent.channels.telegram.TelegramChannel`)."""

    application: Any
    allowed: frozenset[int]  # the owners' user ids (a private chat's id is its user's id)

    async def _with_retry(self, call: Callable[[], Awaitable[Any]]) -> Any: ...


def approval_keyboard(approval_id: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("Approve", callback_data=f"approval:approve:{approval_id}"),
                InlineKeyboardButton("Deny", callback_data=f"approval:deny:{approval_id}"),
            ]
        ]
    )


async def send_notice(channel: OwnerBot, chat_id: int, data: dict[str, Any], text: str) -> None:
    """A notice to one chat; a request gets buttons only in an owner's private chat."""
    assert channel.application is not None
    bot = channel.application.bot
    owner_chat = chat_id in channel.allowed  # a private chat's id is its user's id
    markup = None
    chat_decides = bool(data.get("owner_code"))  # else the router takes decisions only from the control user
    if data.get("type") == "approval_requested" and owner_chat and chat_decides and data.get("approval_id"):
        markup = approval_keyboard(str(data["approval_id"]))
    for chunk in split_message(text)[:3]:

        async def send(chunk: str = chunk) -> Any:
            return await bot.send_message(
                chat_id, chunk, reply_markup=markup, link_preview_options=NO_PREVIEW
            )

        await channel._with_retry(send)


async def on_approval_button(channel: OwnerBot, update: Update, desk: Any) -> None:
    """Approve or Deny pressed: only an allowlisted owner, in their own private chat."""
    query = update.callback_query
    if query is None:
        return
    match = BUTTON_DATA.match(query.data or "")
    message = query.message
    chat = message.chat if message is not None else None
    user = query.from_user
    if (
        match is None
        or chat is None
        or chat.type != Chat.PRIVATE
        or user.id not in channel.allowed
        or chat.id != user.id
        or desk is None
    ):
        log.warning("Telegram: refused an approval button from user id %s", user.id)
        await _answer(query, "Only the owner, in a private chat with me, can decide.")
        return
    decision, approval_id = match.group(1), match.group(2)
    line = await asyncio.to_thread(desk.decide, approval_id, decision, f"telegram:{chat.id}")
    await _answer(query, line[:190])
    try:
        await query.edit_message_reply_markup(reply_markup=None)
        if channel.application is not None:
            await channel.application.bot.send_message(chat.id, line)
    except TelegramError as exc:
        log.warning("Telegram: could not update the approval message: %s", exc)


async def _answer(query: Any, text: str) -> None:
    try:
        await query.answer(text)
    except TelegramError as exc:
        log.warning("Telegram: could not answer a button press: %s", exc)
