"""A platform that echoes the credential inside a successful answer, in any spelling, or split
across two fields: the reply the agent gets holds none of it."""

import json

import pytest

from router.registry import discover_skills
from tests.protocol.test_redaction import spellings
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for
from tests.support.fake_moltbook import FakeMoltbook

KEY = "moltbook_sk_" + "Echo/7f+Kq9=Zx&2"
SKILLS = discover_skills()


@pytest.fixture(scope="module")
def fake():
    server = FakeMoltbook(api_key=KEY).start()
    yield server
    server.stop()


def profile_reply(redis_urls, admin, tmp_path, fake):
    settings = settings_for(redis_urls.router_url, tmp_path, MOLTBOOK_API_BASE=fake.base)
    with WorkerThread(settings, dict(SKILLS), {"MOLTBOOK_API_KEY": KEY}):
        return reply_of(admin, redis_urls.keys, push(admin, redis_urls.keys, "GET_PROFILE", {"platform": "moltbook"}))


@pytest.mark.parametrize("form", sorted(spellings(KEY)))
def test_a_secret_echoed_in_a_successful_answer_never_reaches_the_agent(redis_urls, admin, tmp_path, fake, form):
    shown = spellings(KEY)[form]
    fake.agent = f"agent {shown} here"
    reply = profile_reply(redis_urls, admin, tmp_path, fake)
    text = json.dumps(reply, ensure_ascii=False)
    assert reply["status"] == "ok" and "[REDACTED]" in text
    assert KEY not in text and shown not in text


def test_a_secret_split_across_two_fields_never_reaches_the_agent(redis_urls, admin, tmp_path, fake):
    fake.agent = KEY[:14]
    reply = profile_reply(redis_urls, admin, tmp_path, fake)
    assert KEY[:14] not in json.dumps(reply)
