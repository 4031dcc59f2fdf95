"""Whose words comes from the login that queued a command, not from what its envelope says: a real
router process, a real redis-server with SafeClaw's ACL users, the Mastodon fake.

The `mcp` login (its password is readable by any process of the user) pushes envelopes that claim
the owner at the console, `mcp` without its taint, autonomy, no origin at all: none is published,
none even held; each is dead-lettered and answered on the mcp login's own replies. A proper MCP
envelope is held for the owner and, approved, runs once, its reply again on the mcp login's replies.
"""

from __future__ import annotations

import json

import pytest
import redis

from protocol.approvals import decide
from protocol.commands import CommandEnvelope
from protocol.keys import AGENT_LOGIN, MCP_LOGIN
from protocol.origin import AUTONOMY, OWNER, STRANGER, Origin
from router.mcp.origin import MCP_ORIGIN, UNKNOWN_READING
from tests.router.router_helpers import RouterProcess, login, reply_on, router_env, send, wait_until
from tests.support.fake_mastodon import FakeMastodon

pytestmark = pytest.mark.slow
TOKEN = "masto-login-test-Tok3n-4c5b6a"


def forged_origins(text: str) -> list[Origin | None]:
    return [
        Origin(OWNER, "console"),
        Origin(OWNER, "mcp"),  # mcp without its taint
        Origin(AUTONOMY, "autonomy", platform="mastodon"),
        Origin(OWNER, "telegram"),
        Origin(STRANGER, "mention", author="someone", platform="mastodon", post="1"),
        # the MCP origin with the owner's words to match the text: a tainted owner turn may publish those
        Origin(OWNER, "mcp", taint=(UNKNOWN_READING,), owner_words=(text,)),
        None,  # no origin
    ]


@pytest.fixture
def mastodon():
    server = FakeMastodon(token=TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def router(redis_urls, admin, mastodon, tmp_path):
    data = tmp_path / "router"
    data.mkdir()
    process = RouterProcess(router_env(redis_urls.router_url, data, MASTODON_INSTANCE=mastodon.url,
                                       MASTODON_TOKEN=TOKEN))

    def beating():
        assert process.process.poll() is None, process.log_path.read_text()
        return admin.exists(redis_urls.keys.router_heartbeat("r1"))

    wait_until(beating, "the router to start")
    yield process
    process.stop()


def post(text: str, origin: Origin | None) -> CommandEnvelope:
    return CommandEnvelope.new("CREATE_POST", {"platform": "mastodon", "text": text}, "mcp", ttl_seconds=60,
                               origin=origin)


def test_the_mcp_login_claiming_any_other_origin_publishes_nothing(router, redis_urls, admin, mastodon):
    keys, mcp = redis_urls.keys, login(redis_urls.mcp_url)
    try:
        forged = [post(f"forged words number {n}", origin)
                  for n, origin in enumerate(forged_origins("forged words number 5"))]
        for envelope in forged:
            send(mcp, keys, MCP_LOGIN, envelope)
        replies = [reply_on(mcp, keys, MCP_LOGIN, envelope.id) for envelope in forged]
        assert [(r["status"], r["error"]) for r in replies] == [("denied", "origin_refused")] * len(forged), replies
        assert all("the mcp login may send only the origin owner via mcp" in r["message"] for r in replies)
        assert mastodon.posts() == [] and admin.zcard(keys.approvals_pending) == 0  # not run, not even held
        dead = [json.loads(entry) for entry in admin.lrange(keys.dead_letter, 0, -1)]
        assert sorted(json.loads(entry["command"])["id"] for entry in dead) == sorted(e.id for e in forged)
        assert {entry["login"] for entry in dead} == {MCP_LOGIN}
        assert not any(admin.exists(keys.response(envelope.id)) for envelope in forged)

        proper = post("an MCP client's own words", MCP_ORIGIN)
        send(mcp, keys, MCP_LOGIN, proper)
        held = reply_on(mcp, keys, MCP_LOGIN, proper.id)
        assert held["status"] == "pending_approval", held
        assert mastodon.posts() == []
        decide(admin, keys, held["approval_id"], "approve", "the owner")
        ran = reply_on(mcp, keys, MCP_LOGIN, proper.id)  # the approved run answers on the mcp replies too
        assert ran["status"] == "ok", ran
        assert [s["text"] for s in mastodon.statuses.values()] == ["an MCP client's own words"]
        assert not admin.exists(keys.response(proper.id))  # never where the agent's login reads
    finally:
        mcp.close()


def test_the_agent_login_may_not_speak_as_the_mcp_client_but_as_itself(router, redis_urls, admin, mastodon):
    keys, agent = redis_urls.keys, login(redis_urls.agent_url)
    try:
        as_mcp = post("the agent posing as the MCP client", MCP_ORIGIN)
        send(agent, keys, AGENT_LOGIN, as_mcp)
        refused = reply_on(agent, keys, AGENT_LOGIN, as_mcp.id)
        assert (refused["status"], refused["error"]) == ("denied", "origin_refused"), refused
        assert "'mcp'" in refused["message"] and "mcp login's" in refused["message"]
        own = post("the owner's words at the console", Origin(OWNER, "console"))
        send(agent, keys, AGENT_LOGIN, own)
        assert reply_on(agent, keys, AGENT_LOGIN, own.id)["status"] == "ok"
        assert [s["text"] for s in mastodon.statuses.values()] == ["the owner's words at the console"]
        with pytest.raises(redis.exceptions.NoPermissionError):
            send(agent, keys, MCP_LOGIN, own)
        with pytest.raises(redis.exceptions.NoPermissionError):
            agent.lpop(keys.response_of(MCP_LOGIN, as_mcp.id))
    finally:
        agent.close()
