"""Ordinary words are neither redacted nor held: a token that begins with the platform's name
leaves the name alone in replies, a post that quotes a setting is answered by the cheaper
refusal (a rate of zero), and a short hex tag is published; through a router worker and the
official Mastodon client against a fake Mastodon."""

from __future__ import annotations

import json

import pytest

from router.registry import discover_skills
from tests.router.platforms.test_flaky_platforms import PLATFORMS
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

SKILLS = discover_skills()


@pytest.fixture
def mastodon():
    platform = PLATFORMS["mastodon"]()  # its token is "mastodon-flaky-token-2"
    assert platform.credentials["MASTODON_TOKEN"].startswith("mastodon-")
    yield platform
    platform.fake.stop()


def post(admin, keys, text: str) -> dict:
    return reply_of(admin, keys, push(admin, keys, "CREATE_POST", {"platform": "mastodon", "text": text}))


def worker(mastodon, redis_urls, tmp_path, **extra):
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_QUOTAS="mastodon:post=100",
                            ROUTER_PACING="mastodon:post=0", **mastodon.env, **extra)  # fmt: skip
    return WorkerThread(settings, SKILLS, mastodon.credentials)


def test_a_token_that_begins_with_the_platforms_name_leaves_the_name_in_replies(
    redis_urls, admin, tmp_path, mastodon
):
    keys = redis_urls.keys
    with worker(mastodon, redis_urls, tmp_path):
        published = post(admin, keys, "a post on mastodon")
    # A token the instance does not know (revoked): the refusal names the platform; a post about a
    # token on it is no piece of the key either.
    revoked = {**mastodon.credentials, "MASTODON_TOKEN": "mastodon-" + "token-3"}
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_QUOTAS="mastodon:post=100",
                            ROUTER_PACING="mastodon:post=0", ROUTER_ID="r2")  # fmt: skip
    with WorkerThread(settings, SKILLS, revoked):
        refused = post(admin, keys, "a post with a revoked token")
    assert published["status"] == "ok" and published["result"]["platform"] == "mastodon", published
    assert refused["error"] == "auth_failed", refused
    assert refused["message"].startswith("Mastodon rejected the credentials"), refused
    said = json.dumps(published) + json.dumps(refused)
    assert "[REDACTED]" not in said and "token-3" not in said and "flaky-token-2" not in said


def test_a_rate_of_zero_refuses_a_post_that_quotes_the_setting(redis_urls, admin, tmp_path, mastodon):
    keys = redis_urls.keys
    with worker(mastodon, redis_urls, tmp_path, ROUTER_RATE_LIMITS="*:post=0/60"):
        reply = post(admin, keys, "Posting is off here: ROUTER_RATE_LIMITS=*:post=0/60")
    assert reply["status"] == "denied" and reply["error"] == "rate_limited", reply


@pytest.mark.parametrize("tag", ["a1c4b275a243", "b211b9dbb010"])  # each was held as a base64 "text"
def test_a_post_with_a_short_hex_tag_is_published(redis_urls, admin, tmp_path, mastodon, tag):
    keys = redis_urls.keys
    with worker(mastodon, redis_urls, tmp_path):
        reply = post(admin, keys, f"release {tag} is out")
    assert reply["status"] == "ok", reply
