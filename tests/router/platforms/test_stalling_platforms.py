"""Every platform client (Moltbook's, Mastodon.py, tweepy, praw, atproto) against a platform that
never gives a whole answer: a handshake that never completes, a chunked body that never ends,
endless `100 Continue`, a redirect loop, and a flood of bytes. Each command is answered by its
deadline, the lane serves the next one, and a flood is hung up after the router's byte budget
for one command (`router.queue.hangup.MAX_RECEIVED_BYTES`): it never holds the whole flood in
memory (every client keeps an answer whole before parsing it)."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.commands import CommandEnvelope
from router.queue.hangup import MAX_RECEIVED_BYTES
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, WorkerThread, reply_of, settings_for
from tests.support.stalling_platform import StallingPlatform

SKILLS = discover_skills()
PLATFORMS = ("moltbook", "mastodon", "x", "reddit", "bsky")
STALLS = ("handshake", "chunked", "continue", "redirect")
FLOODS = ("flood", "flood-chunked")


def platform_settings(platform: str, url: str) -> tuple[dict[str, str], dict[str, str]]:
    """The credentials and the settings that point `platform`'s client at `url`."""
    if platform == "moltbook":
        return {"MOLTBOOK_API_KEY": "moltbook_sk_" + "stallKey12345"}, {"MOLTBOOK_API_BASE": url}
    if platform == "mastodon":
        return {"MASTODON_TOKEN": "mastodon-" + "stall-token-1", "MASTODON_INSTANCE": url}, {}
    if platform == "x":
        return ({"X_API_KEY": "ck-stall-1", "X_API_SECRET": "cs-stall-2", "X_ACCESS_TOKEN": "1-at-stall-3",
                 "X_ACCESS_SECRET": "as-stall-4"}, {"X_API_BASE": url})
    if platform == "reddit":
        return ({"REDDIT_CLIENT_ID": "stall-id", "REDDIT_SECRET": "stall-secret-5", "REDDIT_USERNAME": "me",
                 "REDDIT_PASSWORD": "stall-pass-6"}, {"REDDIT_URL": url, "REDDIT_OAUTH_URL": url})
    return {"BSKY_HANDLE": "me.test", "BSKY_PASSWORD": "stall-pass-7"}, {"BSKY_SERVICE": url, "BSKY_APPVIEW": url}


def ask(admin, keys, action: str, params: dict[str, Any], ttl: float) -> dict[str, Any]:
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=ttl, origin=OWNER_TURN)
    admin.lpush(keys.command_queue, envelope.to_json())
    # Generous: without the hang-up none of these platforms ever finishes its answer.
    return reply_of(admin, keys, envelope.id, timeout=ttl + 20)


def serve(redis_urls, tmp_path, platform: str, server: StallingPlatform) -> WorkerThread:
    url = server.url.replace("http://", "https://") if server.mode == "handshake" else server.url
    credentials, env = platform_settings(platform, url)
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_PLATFORM_CONCURRENCY="1", **env)
    return WorkerThread(settings, dict(SKILLS), credentials)


@pytest.mark.slow
@pytest.mark.parametrize("mode", STALLS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_platform_that_never_finishes_is_answered_by_the_deadline(redis_urls, admin, tmp_path, platform, mode):
    keys = redis_urls.keys
    server = StallingPlatform(mode).start()
    try:
        with serve(redis_urls, tmp_path, platform, server):
            first = ask(admin, keys, "GET_PROFILE", {"platform": platform}, ttl=2)
            second = ask(admin, keys, "GET_PROFILE", {"platform": platform}, ttl=2)  # the lane is free again
            assert ask(admin, keys, "PING", {}, ttl=5)["status"] == "ok"
    finally:
        server.stop()
    for reply in (first, second):
        assert reply["status"] == "error" and reply["error"] in ("request_failed", "internal_error"), reply


@pytest.mark.parametrize("mode", FLOODS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_flood_of_bytes_is_hung_up_past_the_budget(redis_urls, admin, tmp_path, platform, mode):
    keys = redis_urls.keys
    server = StallingPlatform(mode).start()
    try:
        with serve(redis_urls, tmp_path, platform, server):
            reply = ask(admin, keys, "GET_PROFILE", {"platform": platform}, ttl=30)
            assert ask(admin, keys, "PING", {}, ttl=5)["status"] == "ok"
    finally:
        server.stop()
    assert reply["status"] == "error" and reply["error"] in ("request_failed", "internal_error"), reply
    # What went out before the hang-up: the budget and what the sockets' buffers held, never the
    # whole flood (256 MB here; gigabytes a second over loopback in a real attack).
    assert server.sent < MAX_RECEIVED_BYTES + (32 << 20), server.sent
