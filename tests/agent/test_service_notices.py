"""The agent service delivers the router's owner notices to the conversation that asked, once,
and without Telegram writes them to the owner's alert log."""

from __future__ import annotations

import asyncio
import json
import os

import redis

from agent.actions import local_actions
from agent.config.settings import settings_from_config
from agent.link.redis_pool import build_redis
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop
from agent.service import AgentService


class Recorder:
    name = "console"

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    async def send(self, conversation: str, text: str) -> None:
        self.sent.append((conversation, text))


def test_notices_reach_the_conversation_that_asked(redis_urls, workspace, tmp_path):
    env = {**os.environ, "REDIS_URL": redis_urls.agent_url}
    settings = settings_from_config({"llm": {"provider": "scripted", "model": "s"}}, tmp_path / "c.json", env)
    loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), None)
    service = AgentService(settings, loop, conn=build_redis(settings))
    console = Recorder()
    service.channels = [console]
    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    keys = redis_urls.keys
    notice = {"type": "approval_settled", "approval_id": "a" * 32, "state": "denied", "conversation": "console",
              "action": "CREATE_POST", "platform": "bsky", "text": "hi", "status": "denied",
              "message": "denied by dashboard"}
    router.lpush(keys.owner_notices, json.dumps(notice))

    async def scenario() -> None:
        task = asyncio.create_task(service._deliver_notices())
        for _ in range(100):
            if console.sent:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert console.sent == [("console", "Denied: your Bluesky post was not run (denied by dashboard).")]
    admin = redis_urls.admin_client()
    assert admin.llen(keys.owner_notices) == 0 and admin.llen(keys.owner_notices_inflight) == 0
    alerts = (workspace.root / "logs" / "owner_alerts.jsonl").read_text()
    assert "Denied: your Bluesky post" in alerts
