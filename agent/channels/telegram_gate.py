"""Who the Telegram bot answers: new messages and button presses from the users on
`channels.telegram.allowed_user_ids`, in private chats unless `allow_groups` is on. A stranger is
told no once (the bot remembers a bounded number of them) and the update ends there."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import Bot, Chat, Update
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop

log = logging.getLogger("safeclaw.agent.telegram")
MAX_REMEMBERED_STRANGERS = 10_000
REFUSAL = "Sorry, this is a private assistant: I only answer its owner. (Your Telegram user id is {user_id}.)"
SendText = Callable[[Bot, int, str], Awaitable[None]]


class OwnerGate:
    def __init__(self, allowed: frozenset[int], allow_groups: bool, send_text: SendText) -> None:
        self.allowed = allowed
        self.allow_groups = allow_groups
        self._send_text = send_text
        self._refused: dict[int, None] = {}  # strangers already told no, oldest first

    async def let_in(self, update: Update, bot: Bot) -> None:
        """Return for an allowlisted user; else refuse and raise ApplicationHandlerStop.

        Groups are refused (with a log line, and nothing said in the group) unless
        channels.telegram.allow_groups is on; even then only allowlisted users are answered."""
        user, chat = update.effective_user, update.effective_chat
        if update.message is None and update.callback_query is None:
            # Asked for new messages only: an edit, a channel post or a business chat's message is not
            # something the owner said to the bot now, whatever a server sends.
            kinds = sorted(set(update.to_dict()) - {"update_id"})
            log.warning("Telegram: refused a %s update (only new messages to the bot are read)",
                        ", ".join(kinds) or "empty")
            raise ApplicationHandlerStop
        if chat is not None and chat.type != Chat.PRIVATE and not self.allow_groups:
            who = user.id if user else "unknown"
            log.warning("Telegram: refused a message in %s chat %s from user id %s "
                        "(channels.telegram.allow_groups is off)", chat.type, chat.id, who)
            raise ApplicationHandlerStop
        if user is not None and user.id in self.allowed:
            return
        if user is not None:
            log.warning("Telegram: refused a message from user id %s (not on the allowlist)", user.id)
        if user is not None and chat is not None and user.id not in self._refused:
            if len(self._refused) >= MAX_REMEMBERED_STRANGERS:  # bounded: a flood of ids costs nothing
                self._refused.pop(next(iter(self._refused)))
            self._refused[user.id] = None
            await self._refuse(bot, chat.id, user.id)
        else:
            log.info("Telegram: ignored another message from user id %s", user.id if user else "unknown")
        raise ApplicationHandlerStop

    async def _refuse(self, bot: Bot, chat_id: int, user_id: int) -> None:
        try:
            await self._send_text(bot, chat_id, REFUSAL.format(user_id=user_id))
        except TelegramError as exc:
            log.warning("Telegram: could not send the refusal to user id %s: %s", user_id, exc)
