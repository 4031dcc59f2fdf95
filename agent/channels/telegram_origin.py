"""Who really wrote a Telegram message: a forward is someone else's words, not the owner's.

Bot API 7.0 describes a forward by `forward_origin`: a user, a user who hides their account, a
chat (a group speaking as itself) or a channel. Each becomes an `outside_author` naming that
origin, so the loop fences the text as data and the turn cannot write the owner's memory.
A channel post Telegram copies into its linked group (`is_automatic_forward`) is a forward too,
and a message sent through an inline bot (`via_bot`) holds that bot's words, not the owner's.
"""

from __future__ import annotations

from collections.abc import Mapping

from telegram import (
    Chat,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
)

from protocol.untrusted import one_line_label

MAX_NAME = 80


def clean(name: object) -> str:
    return one_line_label(name or "", MAX_NAME)


def chat_name(chat: Chat) -> str:
    handle = f" @{clean(chat.username)}" if chat.username else ""
    return f"{clean(chat.title or chat.full_name)}{handle} (id {chat.id})"


def describe_origin(origin: MessageOrigin) -> str:
    if isinstance(origin, MessageOriginUser):
        user = origin.sender_user
        handle = f" @{clean(user.username)}" if user.username else ""
        return f"Telegram user {clean(user.full_name)}{handle} (id {user.id})"
    if isinstance(origin, MessageOriginHiddenUser):
        return f"Telegram user {clean(origin.sender_user_name)} (account hidden)"
    if isinstance(origin, MessageOriginChannel):
        signature = f", signed {clean(origin.author_signature)}" if origin.author_signature else ""
        return f"Telegram channel {chat_name(origin.chat)}, post {origin.message_id}{signature}"
    if isinstance(origin, MessageOriginChat):
        signature = f", signed {clean(origin.author_signature)}" if origin.author_signature else ""
        return f"Telegram chat {chat_name(origin.sender_chat)}{signature}"
    return f"an unknown Telegram origin ({clean(getattr(origin, 'type', '?'))})"


def legacy_origin(fields: Mapping[str, object]) -> str:
    user, chat, name = (
        fields.get("forward_from"),
        fields.get("forward_from_chat"),
        fields.get("forward_sender_name"),
    )
    if isinstance(user, dict):
        return f"Telegram user {clean(user.get('first_name'))} (id {clean(user.get('id'))})"
    if isinstance(chat, dict):
        return f"Telegram chat {clean(chat.get('title'))} (id {clean(chat.get('id'))})"
    if isinstance(name, str):
        return f"Telegram user {clean(name)}"
    return "an unknown origin"


def forward_author(message: Message, forwarder: str) -> str | None:
    """None when `message` is the sender's own words; else who wrote it and who forwarded it."""
    if message.forward_origin is not None:
        return f"{describe_origin(message.forward_origin)}, forwarded by {forwarder}"
    if message.is_automatic_forward:
        return f"a channel post copied into {chat_name(message.chat)}"
    if message.via_bot is not None:
        bot = message.via_bot
        handle = f"@{clean(bot.username)}" if bot.username else clean(bot.full_name)
        return f"Telegram inline bot {handle} (id {bot.id}), sent by {forwarder}"
    legacy = sorted(key for key in message.api_kwargs if key.startswith("forward_"))
    if legacy:  # a Bot API server older than 7.0 marks a forward only with these fields
        origin = legacy_origin(message.api_kwargs)
        return f"{origin} (an older Bot API's forward), forwarded by {forwarder}"
    return None
