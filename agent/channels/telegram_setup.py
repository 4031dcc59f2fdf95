"""Telegram settings: the bot token (environment only), the allowlist (config.json), the token check.

`./safeclaw agent config telegram` runs `configure_telegram`: it checks the token with
`getMe`, asks for the allowed user ids, enables the channel and saves config.json atomically. The
token is never written to config.json and never appears in a message or a log line.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from agent.config.channel_sections import TelegramSettings
from agent.config.settings import Ask, Say, ask_valid, load_config_file
from agent.errors import ConfigError
from agent.workspace.folder import write_json_atomic

TOKEN_VARIABLE = "TELEGRAM_BOT_TOKEN"
API_BASE_VARIABLE = "TELEGRAM_API_BASE"
SETUP_COMMAND = "./safeclaw agent config telegram"
TOKEN_SHAPE = re.compile(r"^\d{3,20}:[A-Za-z0-9_-]{20,}$")
# Keys someone might have put the token under by mistake; the setup removes them.
TOKEN_KEYS = ("token", "bot_token", TOKEN_VARIABLE)


def bot_token(settings: TelegramSettings) -> str:
    """The bot token (from the environment), checked for shape; missing or malformed → ConfigError."""
    token = settings.bot_token
    if not token:
        raise ConfigError(
            f"{TOKEN_VARIABLE} is not set. Create a bot with @BotFather on Telegram, put "
            f"{TOKEN_VARIABLE}=<token> in agent/.env (never in config.json), then run {SETUP_COMMAND}"
        )
    if not TOKEN_SHAPE.match(token):
        raise ConfigError(
            f"{TOKEN_VARIABLE} does not look like a bot token (digits, a colon, then letters, as "
            "@BotFather gives it). Fix it in agent/.env"
        )
    return token


def bot_urls(settings: TelegramSettings) -> tuple[str, str] | None:
    """(base_url, base_file_url) of another Bot API server when TELEGRAM_API_BASE is set."""
    base = settings.api_base.rstrip("/")
    if not base:
        return None
    if not base.startswith(("http://", "https://")):
        raise ConfigError(f"{API_BASE_VARIABLE} must be an http(s) URL such as http://127.0.0.1:8081")
    return f"{base}/bot", f"{base}/file/bot"


def parse_user_ids(text: str) -> list[int]:
    """'123, 456' → [123, 456]; raises ValueError with a reason on anything else."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts:
        raise ValueError("enter at least one numeric user id (message @userinfobot to learn yours)")
    ids: list[int] = []
    for part in parts:
        if not part.isdigit() or int(part) <= 0:
            raise ValueError(f"{part!r} is not a numeric Telegram user id")
        if int(part) not in ids:
            ids.append(int(part))
    return ids


async def fetch_bot_username(settings: TelegramSettings) -> str:
    """Ask Telegram (`getMe`) who the token belongs to; a clear ConfigError if it cannot say."""
    from telegram import Bot
    from telegram.error import InvalidToken, TelegramError

    urls, token = bot_urls(settings), bot_token(settings)
    bot = Bot(token, base_url=urls[0], base_file_url=urls[1]) if urls else Bot(token)
    try:
        async with bot:  # initialize() calls getMe
            return bot.username
    except InvalidToken:
        raise ConfigError(
            f"Telegram rejected the token in {TOKEN_VARIABLE} (Unauthorized). Copy it again from "
            "@BotFather into agent/.env"
        ) from None
    except TelegramError as exc:
        raise ConfigError(f"cannot check the bot token with Telegram: {exc.message}") from None


def configure_telegram(
    config_path: Path, settings: TelegramSettings, ask: Ask = input, say: Say = print
) -> dict[str, Any]:
    """Check the token, ask for the allowed user ids, enable the channel, save config.json.

    `settings` carries the token and API base from the environment (TelegramSettings.from_env)."""
    data = load_config_file(config_path)
    username = asyncio.run(fetch_bot_username(settings))
    say(f"The token in {TOKEN_VARIABLE} belongs to @{username}.")
    channels = data.get("channels")
    channels = dict(channels) if isinstance(channels, dict) else {}
    conf = channels.get("telegram")
    conf = dict(conf) if isinstance(conf, dict) else {}
    for key in TOKEN_KEYS:
        if conf.pop(key, None) is not None:
            say(f"  Removed {key!r} from config.json: the token belongs in agent/.env only.")
    current = conf.get("allowed_user_ids")
    default = ", ".join(str(i) for i in current) if isinstance(current, list) else ""
    say("Only these Telegram users will be answered. Message @userinfobot to learn your numeric id.")
    conf["allowed_user_ids"] = ask_valid(
        ask, say, "Allowed user ids, comma-separated", default, parse_user_ids
    )
    conf["enabled"] = True
    channels["telegram"] = conf
    data["channels"] = channels
    write_json_atomic(config_path, data)
    say(f"Saved to {config_path}:")
    say(json.dumps({"channels": {"telegram": conf}}, indent=2))
    say("Start SafeClaw with ./safeclaw: it answers on Telegram as well as in the console.")
    return data
