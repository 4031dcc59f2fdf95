"""Owner notices: always in owner_alerts.jsonl; on Telegram to each allowed user when configured."""

import json

from agent.config.channel_sections import TelegramSettings
from agent.config.reader import Section
from agent.owner.alerts import OwnerNotifier
from tests.agent.channels.telegram_helpers import OWNER
from tests.support.fake_telegram import FakeTelegram, server_error


def telegram(conf, env):
    return TelegramSettings.parse(Section(conf, "config.json", "channels.telegram"), env)


def test_a_notice_reaches_every_allowed_user_on_telegram_and_the_log(tmp_path):
    with FakeTelegram() as fake:
        env = {"TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE": fake.url}
        notifier = OwnerNotifier.from_settings(tmp_path, telegram({"allowed_user_ids": [OWNER, 222]}, env))
        notifier("budget", "80% of the daily budget is spent")
        texts = {m["chat_id"]: m["text"] for m in fake.sent_messages()}
    text = "SafeClaw budget: 80% of the daily budget is spent"
    assert texts == {OWNER: text, 222: text}
    (line,) = (tmp_path / "logs" / "owner_alerts.jsonl").read_text().splitlines()
    assert json.loads(line)["kind"] == "budget"


def test_telegram_trouble_never_stops_the_agent_and_the_log_keeps_the_notice(tmp_path):
    with FakeTelegram() as fake:
        fake.fail_next("sendMessage", server_error(), server_error(), server_error())
        env = {"TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE": fake.url}
        notifier = OwnerNotifier.from_settings(tmp_path, telegram({"allowed_user_ids": [OWNER]}, env))
        notifier("pause", "autonomy paused: kill switch")
    assert "kill switch" in (tmp_path / "logs" / "owner_alerts.jsonl").read_text()


def test_without_telegram_a_notice_only_goes_to_the_log(tmp_path):
    notifier = OwnerNotifier.from_settings(tmp_path, telegram({"allowed_user_ids": [OWNER]}, {}))
    assert not notifier.telegram
    notifier("public", "posted")
    assert "posted" in (tmp_path / "logs" / "owner_alerts.jsonl").read_text()
