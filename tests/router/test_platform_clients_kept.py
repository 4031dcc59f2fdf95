"""One platform client per platform per lane thread: consecutive posts on Mastodon reuse the
client (the instance's length limit is looked up once, the connection is kept), and a kept
client's connection is still hung up at a command's deadline."""

from __future__ import annotations

from router.registry import discover_skills
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for
from tests.support.fake_mastodon import FakeMastodon

TOKEN = "kept-mastodon-" + "token-value"


def test_consecutive_posts_reuse_one_client(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    masto = FakeMastodon(token=TOKEN).start()
    try:
        settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_QUOTAS="mastodon:post=100",
                                ROUTER_PACING="mastodon:post=0", ROUTER_PLATFORM_CONCURRENCY="1")
        credentials = {"MASTODON_INSTANCE": masto.url, "MASTODON_TOKEN": TOKEN}
        with WorkerThread(settings, discover_skills(), credentials):
            replies = [reply_of(admin, keys, push(admin, keys, "CREATE_POST",
                                                  {"platform": "mastodon", "text": f"kept client {n} {w}"}))
                       for n, w in enumerate(("apple", "river", "stone"))]
    finally:
        masto.stop()
    assert [r["status"] for r in replies] == ["ok"] * 3, replies
    assert [p for p in masto.paths("GET") if "instance" in p] == ["/api/v2/instance/"]
    assert len(masto.posts()) == 3
