"""A platform that echoes the credential inside a successful answer, in any spelling its transport
writes: the reply the agent gets from a real router holds none of it."""

import json

import pytest

from tests.protocol.test_redaction import spellings
from tests.router.router_helpers import moltbook_router, push, reply_of
from tests.support.fake_moltbook import FakeMoltbook

KEY = "moltbook_sk_" + "Echo/7f+Kq9=Zx&2"


@pytest.fixture(scope="module")
def fake():
    server = FakeMoltbook(api_key=KEY).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def router(redis_server, fake, tmp_path_factory):
    with moltbook_router(redis_server, tmp_path_factory.mktemp("echo"), KEY, fake) as admin:
        yield admin


def profile_reply(router, redis_server, fake, name, agent_id="agent-1", description="a careful agent"):
    fake.agent, fake.agent_id, fake.description = name, agent_id, description
    keys = redis_server.keys
    return reply_of(router, keys, push(router, keys, "GET_PROFILE", {"platform": "moltbook"}))


@pytest.mark.parametrize("form", sorted(spellings(KEY)))
def test_a_secret_echoed_in_a_successful_answer_never_reaches_the_agent(router, redis_server, fake, form):
    shown = spellings(KEY)[form]
    reply = profile_reply(router, redis_server, fake, f"agent {shown} here")
    text = json.dumps(reply, ensure_ascii=False)
    assert reply["status"] == "ok" and "[REDACTED]" in text
    assert KEY not in text and shown not in text
