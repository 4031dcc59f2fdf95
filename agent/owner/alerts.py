"""Telling the owner: budget alerts, public actions and pauses of autonomy.

Every notice is appended to workspace/logs/owner_alerts.jsonl and logged; when Telegram is
configured (TELEGRAM_BOT_TOKEN and `channels.telegram.allowed_user_ids`), it is also sent to each
allowed user. A notice that cannot be delivered is logged, never raised: telling the owner must
not stop the agent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.channels.telegram_setup import bot_token, bot_urls
from agent.errors import ConfigError

if TYPE_CHECKING:
    from agent.config.channel_sections import TelegramSettings

log = logging.getLogger("safeclaw.agent.notify")
SEND_TIMEOUT = 10.0
MAX_TEXT = 3500  # under Telegram's 4096-character message limit


class OwnerNotifier:
    def __init__(
        self,
        log_path: Path,
        token: str = "",
        user_ids: frozenset[int] = frozenset(),
        urls: tuple[str, str] | None = None,
    ) -> None:
        self.log_path = log_path
        self.token = token
        self.user_ids = user_ids
        self.urls = urls

    @classmethod
    def from_settings(cls, workspace_root: Path, telegram: TelegramSettings) -> OwnerNotifier:
        log_path = workspace_root / "logs" / "owner_alerts.jsonl"
        if not telegram.bot_token:
            return cls(log_path)
        try:
            return cls(log_path, bot_token(telegram), telegram.allowed_user_ids, bot_urls(telegram))
        except ConfigError as exc:
            log.warning("owner notices go to %s only: %s", log_path, exc)
            return cls(log_path)

    @property
    def telegram(self) -> bool:
        return bool(self.token and self.user_ids)

    def __call__(self, kind: str, text: str) -> None:
        self.notify(kind, text)

    def notify(self, kind: str, text: str) -> None:
        record = json.dumps({"ts": round(time.time(), 3), "kind": kind, "text": text}, ensure_ascii=False)
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(record + "\n")
        except OSError as exc:
            log.error("cannot write %s: %s", self.log_path, exc)
        log.info("owner notice (%s): %s", kind, text)
        if self.telegram:
            self._send_telegram(f"SafeClaw {kind}: {text}"[:MAX_TEXT])

    def _send_telegram(self, text: str) -> None:
        """Send on a thread of its own, so it works from inside or outside an event loop."""
        thread = threading.Thread(target=lambda: asyncio.run(self._send_all(text)), daemon=True)
        thread.start()
        thread.join(timeout=SEND_TIMEOUT * 2)

    async def _send_all(self, text: str) -> None:
        from telegram import Bot
        from telegram.error import TelegramError

        kwargs: dict[str, Any] = {}
        if self.urls:
            kwargs = {"base_url": self.urls[0], "base_file_url": self.urls[1]}
        try:
            async with Bot(self.token, **kwargs) as bot:
                for user_id in sorted(self.user_ids):
                    await bot.send_message(
                        chat_id=user_id,
                        text=text,
                        read_timeout=SEND_TIMEOUT,
                        write_timeout=SEND_TIMEOUT,
                        connect_timeout=SEND_TIMEOUT,
                    )
        except (TelegramError, OSError) as exc:
            log.warning("could not send a notice to the owner on Telegram: %s", type(exc).__name__)
