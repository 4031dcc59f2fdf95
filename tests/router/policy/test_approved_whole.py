"""What the owner approves is what is published, to the last word: a held post longer than its
platform takes is never cut after the owner read it whole (the cut could drop the very words that
made it look harmless). It is answered with the reason and nothing is published; a text that fits
goes out exactly as approved. A real router Worker, a real redis-server and the fake Bluesky
server speaking the AT Protocol to the official client."""

from __future__ import annotations

import json

import pytest
import redis

from protocol import approvals
from router.registry import discover_skills
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for, wait_until
from tests.support.fake_bsky import FakeBluesky

PASSWORD = "whole-bsky-" + "pass-5678"
# 280 characters a person would approve, then the words that make it a joke; Bluesky takes 300.
BAIT = "Giveaway! Send 0.1 ETH to the address in my profile and get 1 ETH back within the hour. " * 3
LONG = BAIT.strip() + " ... just kidding: this is how the scam goes, never send anyone crypto."


@pytest.fixture
def bsky():
    server = FakeBluesky(password=PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def control(redis_urls):
    client = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    yield client
    client.close()


def approve_and_settle(admin, control, keys, approval_id):
    approvals.decide(control, keys, approval_id, "approve", "dashboard")

    def outcome():
        record = json.loads(admin.get(keys.approval(approval_id)))
        return record.get("outcome")

    return wait_until(outcome, "the approved post's outcome")


@pytest.mark.slow
def test_an_approved_post_too_long_for_its_platform_is_not_cut_and_not_published(
    redis_urls, admin, control, tmp_path, bsky
):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="bsky:post",
                            BSKY_SERVICE=bsky.url, BSKY_APPVIEW=bsky.url)
    credentials = {"BSKY_HANDLE": bsky.handle, "BSKY_PASSWORD": PASSWORD}
    with WorkerThread(settings, discover_skills(), credentials):
        held = reply_of(admin, keys, push(admin, keys, "CREATE_POST", {"platform": "bsky", "text": LONG}))
        assert held["status"] == "pending_approval", held
        outcome = approve_and_settle(admin, control, keys, held["approval_id"])
        assert outcome["status"] == "error" and "approved it whole" in outcome["message"], outcome
        assert bsky.writes() == []

        fits = "A short post the owner read to the end."
        held = reply_of(admin, keys, push(admin, keys, "CREATE_POST", {"platform": "bsky", "text": fits}))
        outcome = approve_and_settle(admin, control, keys, held["approval_id"])
        assert outcome["status"] == "ok", outcome
        assert [w["record"]["text"] for w in bsky.writes()] == [fits]


def test_a_post_nobody_approved_is_still_cut_to_fit_and_says_so(redis_urls, admin, tmp_path, bsky):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, BSKY_SERVICE=bsky.url, BSKY_APPVIEW=bsky.url)
    credentials = {"BSKY_HANDLE": bsky.handle, "BSKY_PASSWORD": PASSWORD}
    with WorkerThread(settings, discover_skills(), credentials):
        reply = reply_of(admin, keys, push(admin, keys, "CREATE_POST", {"platform": "bsky", "text": LONG}))
    assert reply["status"] == "ok" and reply["result"]["truncated"] is True
    assert bsky.writes()[0]["record"]["text"].endswith("…")
