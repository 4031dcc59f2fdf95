"""CREATE_POST end to end: agent's RouterClient → real redis-server → router Worker → fake platform."""

import json
import logging

import pytest

from agent.link.origin import Speaking
from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, WorkerThread, settings_for
from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_mastodon import FakeMastodon

BSKY_SECRET = "e2e-bsky-SECRET-pass"
MASTO_SECRET = "e2e-masto-SECRET-token"


@pytest.fixture
def fakes():
    bsky, masto = FakeBluesky(password=BSKY_SECRET).start(), FakeMastodon(token=MASTO_SECRET).start()
    yield bsky, masto
    bsky.stop()
    masto.stop()


@pytest.fixture
def router(redis_urls, tmp_path, fakes):
    bsky, masto = fakes
    settings = settings_for(redis_urls.router_url, tmp_path, BSKY_SERVICE=bsky.url, BSKY_APPVIEW=bsky.url)
    credentials = {
        "BSKY_HANDLE": bsky.handle,
        "BSKY_PASSWORD": BSKY_SECRET,
        "MASTODON_INSTANCE": masto.url,
        "MASTODON_TOKEN": MASTO_SECRET,
    }
    with WorkerThread(settings, discover_skills(), credentials) as worker:
        client = RouterClient(redis_client(redis_urls.agent_url), redis_urls.keys, timeout=30)
        yield Speaking(client, OWNER_TURN), worker  # the owner at the console, having read nothing
        client.conn.close()


def test_create_post_on_bsky_and_mastodon_through_redis(router, fakes, redis_urls):
    client, _ = router
    bsky, masto = fakes
    on_bsky = client.call("CREATE_POST", {"platform": "bsky", "text": "hello via redis"}, "e2e")
    assert on_bsky["status"] == "ok", on_bsky
    assert on_bsky["result"]["url"].startswith(f"https://bsky.app/profile/{bsky.handle}/post/")
    assert bsky.writes()[-1]["record"]["text"] == "hello via redis"
    on_masto = client.call("CREATE_POST", {"platform": "mastodon", "text": "hello fediverse"}, "e2e")
    assert on_masto["status"] == "ok", on_masto
    assert masto.statuses[on_masto["result"]["id"]]["text"] == "hello fediverse"
    key = masto.posts()[-1].headers["idempotency-key"]
    assert key and len(masto.statuses) == 1


def test_auth_failure_reaches_the_agent_without_the_secret(router, fakes, redis_urls, caplog):
    caplog.set_level(logging.DEBUG)
    client, _ = router
    bsky, masto = fakes
    bsky.fail_mode = masto.fail_mode = "auth"
    for platform, secret in (("bsky", BSKY_SECRET), ("mastodon", MASTO_SECRET)):
        answer = client.call("CREATE_POST", {"platform": platform, "text": "x"}, "e2e")
        assert answer["status"] == "error" and answer.get("error") == "auth_failed", answer
        assert secret not in json.dumps(answer)
    admin = redis_urls.admin_client()
    try:
        dump = json.dumps({k: str(admin.dump(k)) for k in admin.keys("*")})
    finally:
        admin.close()
    assert BSKY_SECRET not in dump and MASTO_SECRET not in dump
    assert BSKY_SECRET not in caplog.text and MASTO_SECRET not in caplog.text
