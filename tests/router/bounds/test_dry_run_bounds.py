"""Issue 21, item 6: a dry-run "hello world" made the real post of the same words, ten minutes
later, fail as a duplicate for 7 days, and dry runs spent the day's quotas. A dry run now counts
in bounds of its own: it rehearses them, and never spends or blocks the real ones."""

from __future__ import annotations

from router.registry import discover_skills
from tests.router.bounds.test_bounds_end_to_end import BSKY_PASSWORD, Clock, bsky  # noqa: F401
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

TEXT = "hello world, the first words of a new agent"


def call(admin, keys, text: str) -> dict:
    return reply_of(admin, keys, push(admin, keys, "CREATE_POST", {"platform": "bsky", "text": text}))


def posted(server) -> list[str]:
    return [w["record"]["text"] for w in server.writes() if w["collection"] == "app.bsky.feed.post"]


def router(redis_urls, tmp_path, clock, credentials, **env):
    thread = WorkerThread(settings_for(redis_urls.router_url, tmp_path, **env), discover_skills(), credentials)
    thread.worker.policy.clock = clock
    return thread


def test_a_dry_run_neither_spends_nor_blocks_the_real_bounds(redis_urls, tmp_path, bsky):  # noqa: F811
    admin = redis_urls.admin_client()
    clock = Clock()
    quota = {"ROUTER_QUOTAS": "bsky:post=2", "ROUTER_PACING": "bsky:post=0"}
    try:
        with router(redis_urls, tmp_path / "dry", clock, {}, ROUTER_DRY_RUN="true", **quota):
            first = call(admin, redis_urls.keys, TEXT)
            assert first["status"] == "ok" and first["result"]["dry_run"] is True
            clock.now += 60
            again = call(admin, redis_urls.keys, TEXT)  # the rehearsal keeps its own duplicate guard
            assert again["status"] == "denied" and again["error"] == "duplicate_content"
            assert "dry run's own bounds" in again["message"]
            clock.now += 60
            assert call(admin, redis_urls.keys, "another thought for the quota")["status"] == "ok"
            clock.now += 60
            spent = call(admin, redis_urls.keys, "a third thought, over the dry run's quota")
            assert spent["status"] == "denied" and spent["error"] == "quota_exceeded"
        assert posted(bsky) == []
        clock.now += 600  # ten minutes later, the real thing
        login = {"BSKY_HANDLE": bsky.handle, "BSKY_PASSWORD": BSKY_PASSWORD}
        with router(redis_urls, tmp_path / "real", clock, login, BSKY_SERVICE=bsky.url, BSKY_APPVIEW=bsky.url,
                    **quota):
            real = call(admin, redis_urls.keys, TEXT)
            assert real["status"] == "ok" and not real["result"].get("dry_run"), real
            clock.now += 60
            second = call(admin, redis_urls.keys, "the real second post of the day")
            assert second["status"] == "ok", second  # the dry run spent none of the real quota
        assert posted(bsky) == [TEXT, "the real second post of the day"]
    finally:
        admin.close()
