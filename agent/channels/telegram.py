"""The Telegram channel: the owner talks to the agent through a bot (python-telegram-bot v22).

It runs inside the agent's own event loop (`async with application:`, `start()`,
`updater.start_polling()`), answers only the users on `channels.telegram.allowed_user_ids`, and
keeps each chat as its own conversation, `telegram:<chat id>`.

Exactly once: pending updates are never dropped at start-up. The updater confirms each batch it
fetched with its next `getUpdates` offset, and `stop()` (SIGTERM, SIGINT) stops the updater first
(a last `getUpdates` confirms everything fetched) and then the application, which still answers
every update already fetched before it returns. So a stopped agent neither loses nor repeats a
message. (A SIGKILL mid-turn leaves that message in the chat's history, unanswered.)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from telegram import Bot, BotCommand, Update
from telegram.error import BadRequest, Conflict, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from agent.channels.base import BaseChannel, IncomingMessage
from agent.channels.base import MessageHandler as AgentHandler
from agent.channels.run_state import ChannelRun
from agent.channels.telegram_approvals import on_approval_button, send_notice
from agent.channels.telegram_gate import OwnerGate
from agent.channels.telegram_origin import forward_author
from agent.channels.telegram_sending import NO_PREVIEW, retry_after_seconds, typing, with_retry
from agent.channels.telegram_setup import SETUP_COMMAND, TOKEN_VARIABLE, bot_token, bot_urls
from agent.channels.text_split import split_message
from agent.commands import command_specs
from agent.errors import ConfigError

if TYPE_CHECKING:
    from agent.config.channel_sections import TelegramSettings

log = logging.getLogger("safeclaw.agent.telegram")
T = TypeVar("T")
Context = ContextTypes.DEFAULT_TYPE
POLL_TIMEOUT = 30  # seconds of long polling per getUpdates


def bot_commands() -> list[BotCommand]:
    """The menu Telegram shows for "/": every slash command with what it takes."""
    return [BotCommand(spec.name, f"{spec.args} — {spec.summary}" if spec.args else spec.summary)
            for spec in command_specs()]


def conversation_id(chat_id: int) -> str:
    return f"telegram:{chat_id}"


def chat_id_of(conversation: str) -> int:
    prefix, _, number = conversation.partition(":")
    if prefix != "telegram" or not number.lstrip("-").isdigit():
        raise ValueError(f"{conversation!r} is not a Telegram conversation (telegram:<chat id>)")
    return int(number)


class TelegramChannel(BaseChannel):
    name = "telegram"
    send_attempts = 5  # per Telegram call, network errors and 429s included
    retry_base_delay = 1.0  # seconds, doubled after each network error

    def __init__(self, handle: AgentHandler, settings: TelegramSettings, service: Any = None) -> None:
        super().__init__(handle)
        self.settings = settings
        self.service = service  # the AgentService (commands reach it through `handle`)
        self.allowed = settings.allowed_user_ids
        self.allow_groups = settings.allow_groups
        self._token = bot_token(settings)
        self._urls = bot_urls(settings)
        self.application: Application[Any, Any, Any, Any, Any, Any] | None = None
        self.gate = OwnerGate(self.allowed, self.allow_groups, self._send_text)
        self.run = ChannelRun()

    # --- lifecycle ------------------------------------------------------------------------
    def build_application(self) -> Application[Any, Any, Any, Any, Any, Any]:
        builder = Application.builder().token(self._token)
        if self._urls:
            builder = builder.base_url(self._urls[0]).base_file_url(self._urls[1])
        app = builder.build()
        app.add_handler(TypeHandler(Update, self.on_any_update), group=-1)
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self.on_text))
        app.add_handler(MessageHandler(filters.COMMAND, self.on_command))
        app.add_handler(MessageHandler(~filters.TEXT, self.on_not_text))
        app.add_error_handler(self.on_error)
        return app

    async def start(self) -> None:
        if self.run.stop_requested.is_set():
            return
        self.run.begin()
        app = self.application = self.build_application()
        try:
            if not await self._initialize(app):
                return
            async with app:  # already initialized; guarantees shutdown()
                try:
                    await app.start()
                    assert app.updater is not None
                    await app.updater.start_polling(
                        drop_pending_updates=False, timeout=POLL_TIMEOUT, bootstrap_retries=3,
                        allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY],  # approval buttons
                        error_callback=self._on_polling_error,
                    )
                    await self._announce(app.bot)
                    await self.run.stop_requested.wait()
                finally:
                    await self._stop_polling_and_answer_fetched(app)
        finally:
            self.run.end()
            log.info("Telegram channel stopped")

    async def stop(self) -> None:
        await self.run.stop()

    async def _initialize(self, app: Application[Any, Any, Any, Any, Any, Any]) -> bool:
        """`getMe` until it works (network errors retried with backoff) or stop is asked; False on stop."""
        delay = self.retry_base_delay
        while not self.run.stop_requested.is_set():
            try:
                await app.initialize()
                return True
            except InvalidToken:
                raise ConfigError(
                    f"Telegram rejected {TOKEN_VARIABLE} (Unauthorized). Copy the token again from "
                    f"@BotFather into agent/.env, then run {SETUP_COMMAND}"
                ) from None
            except (NetworkError, RetryAfter) as exc:
                if isinstance(exc, BadRequest):
                    raise
                wait = retry_after_seconds(exc) if isinstance(exc, RetryAfter) else delay
                log.warning("cannot reach Telegram (%s); retrying in %.0fs", exc, wait)
            await self.run.pause(wait)
            delay = min(delay * 2, 60.0)
        return False

    async def _stop_polling_and_answer_fetched(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        # Updater first: its last getUpdates confirms the fetched updates; then the application,
        # which answers the ones still queued before it returns.
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()

    async def _announce(self, bot: Bot) -> None:
        if not self.allowed:
            log.warning(
                "channels.telegram.allowed_user_ids is empty: the Telegram channel refuses everyone. "
                "Add your user id with: %s", SETUP_COMMAND,
            )
        with contextlib.suppress(TelegramError):
            await bot.set_my_commands(bot_commands())
        log.info("Telegram channel polling as @%s; %d allowed user(s)", bot.username, len(self.allowed))

    def _on_polling_error(self, exc: TelegramError) -> None:
        if isinstance(exc, Conflict):
            log.warning("Telegram: another process is polling with this bot token; retrying")
        else:
            log.warning("Telegram polling failed (%s); the library retries", exc)

    # --- handlers -------------------------------------------------------------------------
    async def on_any_update(self, update: Update, context: Context) -> None:
        """Let allowlisted users in private chats through; refuse anyone else once, and end the update
        there (see telegram_gate)."""
        await self.gate.let_in(update, context.bot)

    def incoming(self, update: Update) -> IncomingMessage:
        """The message for the agent; a forward carries its origin as `outside_author`."""
        message, chat, user = update.effective_message, update.effective_chat, update.effective_user
        assert message is not None and chat is not None and user is not None
        author = forward_author(message, f"your owner (Telegram user id {user.id})")
        if author is not None:
            log.info("Telegram: message %s in chat %s is a forward: %s", message.message_id, chat.id, author)
        return IncomingMessage(self.name, conversation_id(chat.id), str(user.id), message.text or "",
                               outside_author=author)

    async def on_text(self, update: Update, context: Context) -> None:
        """An owner's message: one agent turn, with 'typing…' shown until the reply is ready."""
        chat = update.effective_chat
        assert chat is not None
        incoming = self.incoming(update)
        async with typing(context.bot, chat.id):
            reply = await self.handle(incoming)
        await self.send(incoming.conversation, reply)

    async def on_command(self, update: Update, context: Context) -> None:
        """/post, /help, … : answered by the agent's command dispatcher (never the model), in plain
        text, since a command's answer holds URLs and names whose underscores are not Markdown."""
        chat = update.effective_chat
        assert chat is not None
        incoming = self.incoming(update)  # a forwarded "/post …" is someone else's text, never a command
        async with typing(context.bot, chat.id):
            reply = await self.handle(incoming)
        for chunk in split_message(reply):
            await self._send_text(context.bot, chat.id, chunk)

    async def on_not_text(self, update: Update, context: Context) -> None:
        """Photos, stickers, voice…: only text is read for now."""
        await self._reply(update, "I can only read text messages for now.")

    async def on_error(self, update: object, context: Context) -> None:
        """Log first; then tell the owner (never a stranger) that the message failed."""
        log.error("Telegram handler failed: %s", context.error, exc_info=context.error)
        if not isinstance(update, Update) or update.effective_chat is None or update.effective_user is None:
            return
        if update.effective_user.id in self.allowed:
            with contextlib.suppress(TelegramError):
                await context.bot.send_message(update.effective_chat.id, "Sorry, that failed on my side.")

    # --- sending --------------------------------------------------------------------------
    async def on_button(self, update: Update, context: Context) -> None:
        """An Approve or Deny button of an approval request (see telegram_approvals)."""
        await on_approval_button(self, update, getattr(self.service, "desk", None))

    async def send_notice(self, conversation: str, data: dict[str, Any], text: str) -> None:
        """An owner notice (approval asked or settled); buttons in the owner's private chat."""
        if self.application is None or not self.run.running:
            raise RuntimeError("the Telegram channel is not running")
        await send_notice(self, chat_id_of(conversation), data, text)

    async def send(self, conversation: str, text: str) -> None:
        if self.application is None or not self.run.running:
            raise RuntimeError("the Telegram channel is not running")
        chat_id = chat_id_of(conversation)
        chunks = split_message(text)
        if not chunks:
            log.warning("Telegram: empty reply for %s not sent", conversation)
        for chunk in chunks:
            await self._send_text(self.application.bot, chat_id, chunk)

    async def progress(self, conversation: str, text: str) -> None:
        """Each search, read and verdict as a short plain message; the round counter is left out
        so a chat is not flooded."""
        if text.startswith("round "):
            return
        if self.application is None or not self.run.running:
            raise RuntimeError("the Telegram channel is not running")
        bot, chat_id = self.application.bot, chat_id_of(conversation)
        await self._send_text(bot, chat_id, f"… {text}"[:4000])

    async def _reply(self, update: Update, text: str) -> None:
        """The bot's own short texts (help, status): plain, so an underscore is not Markdown."""
        assert update.effective_chat is not None
        await self._send_text(update.get_bot(), update.effective_chat.id, text)

    async def _send_text(self, bot: Bot, chat_id: int, text: str) -> None:
        """One message, plain text (no entity parsing, no link preview): what was written is what shows."""
        await self._with_retry(lambda: bot.send_message(chat_id, text, link_preview_options=NO_PREVIEW))

    async def _with_retry(self, call: Callable[[], Awaitable[T]]) -> T:
        """Telegram's retry (see telegram_sending) with this channel's bounds."""
        return await with_retry(call, self.send_attempts, self.retry_base_delay)
