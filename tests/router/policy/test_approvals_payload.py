"""What the owner approves is exactly what is published, and a backlog of held commands stays cheap:
every field a platform will receive is stored, shown and audited; the duplicate guard reads every
published field; pending approvals are capped (answered `busy`) and the sweep reads only what
expired. A real router Worker against a real redis-server, in dry run (the outbox is what would
have been sent)."""

from __future__ import annotations

import json

import pytest
import redis

from agent.link.approval_desk import notice_text
from protocol import approvals
from protocol.commands import CommandEnvelope
from router.policy.approval_store import ApprovalStore, PendingCaps
from router.registry import discover_skills
from scripts.control_cli import list_approvals
from tests.router.router_helpers import OWNER_TURN, WorkerThread, push, reply_of, settings_for, wait_until

SKILLS = discover_skills()
TITLE = "FREE CRYPTO: claim 5 BTC today"
LINK = "https://claim-btc.example/wallet-connect"


@pytest.fixture
def control(redis_urls):
    client = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    yield client
    client.close()


def router(redis_urls, tmp_path, **env):
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="1", **env)
    return WorkerThread(settings, dict(SKILLS))


def notices(admin, keys):
    return [json.loads(n) for n in reversed(admin.lrange(keys.owner_notices, 0, -1))]


def audit_lines(tmp_path):
    lines = []
    for path in sorted((tmp_path / "audit").glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines()]
    return lines


def outbox(tmp_path):
    path = tmp_path / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_held_post_shows_stores_and_audits_its_title_and_link_not_only_its_text(
    redis_urls, admin, control, tmp_path
):
    keys = redis_urls.keys
    params = {"platform": "reddit", "subreddit": "news", "title": TITLE, "text": "a harmless line",
              "url": LINK}
    with router(redis_urls, tmp_path, ROUTER_REQUIRE_APPROVAL="CREATE_POST"):
        reply = reply_of(admin, keys, push(admin, keys, "CREATE_POST", params, conversation="console"))
        assert reply["status"] == "pending_approval"
        [view] = approvals.pending(control, keys)
        shown = {item["field"]: item["value"] for item in view["payload"]}
        assert shown == {"platform": "reddit", "subreddit": "news", "title": TITLE, "text": "a harmless line",
                         "url": LINK}
        [asked] = [n for n in notices(admin, keys) if n["type"] == "approval_requested"]
        chat = notice_text(asked)
        assert TITLE in chat and LINK in chat and "community: news" in chat
        terminal = "\n".join(list_approvals(control, keys))
        assert TITLE in terminal and LINK in terminal
        approvals.decide(control, keys, view["id"], "approve", "dashboard")
        wait_until(lambda: outbox(tmp_path), "the approved post in the outbox")
    [sent] = outbox(tmp_path)
    assert sent["params"] == params  # what was shown is what went out, field for field
    held, *ran = [line for line in audit_lines(tmp_path) if line["action"] == "CREATE_POST"]
    assert held["decision"] == "pending_approval" and held["payload"] == params
    assert ran and all(line["decision"].startswith("approved by") and line["payload"] == params for line in ran)


def test_a_held_delete_shows_the_post_it_deletes(redis_urls, admin, control, tmp_path):
    keys = redis_urls.keys
    target = "at://did:plc:owner/app.bsky.feed.post/3kprecious"
    with router(redis_urls, tmp_path, ROUTER_REQUIRE_APPROVAL="DELETE_POST"):
        push(admin, keys, "DELETE_POST", {"platform": "bsky", "post_id": target})
        view = wait_until(lambda: approvals.pending(control, keys), "the held delete")[0]
    assert {"field": "post_id", "label": "post to delete", "value": target} in view["payload"]
    [asked] = [n for n in notices(admin, keys) if n["type"] == "approval_requested"]
    assert f"post to delete: {target}" in notice_text(asked)


def test_the_duplicate_guard_reads_the_title_too(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    first = {"platform": "reddit", "subreddit": "news", "title": TITLE + " with this exact wording, spread by the campaign across every community it reaches", "text": "hi"}
    again = {"platform": "reddit", "subreddit": "news", "title": "hello", "text": TITLE + " with this exact wording, spread by the campaign across every community it reaches"}
    with router(redis_urls, tmp_path):
        assert reply_of(admin, keys, push(admin, keys, "CREATE_POST", first))["status"] == "ok"
        refused = reply_of(admin, keys, push(admin, keys, "CREATE_POST", again))
    assert refused["error"] == "duplicate_content"


def test_held_commands_are_capped_per_conversation_and_overall_and_answered_busy(
    redis_urls, admin, control, tmp_path
):
    keys = redis_urls.keys
    caps = {"ROUTER_REQUIRE_APPROVAL": "NOTE", "ROUTER_MAX_PENDING_PER_CONVERSATION": "3",
            "ROUTER_MAX_PENDING_APPROVALS": "5"}
    with router(redis_urls, tmp_path, **caps):
        # One at a time: commands held at once in parallel lanes may refuse one more than needed.
        flood = [push(admin, keys, "NOTE", {"text": f"a{i}"}, conversation="telegram:1") for i in range(1)]
        from_a = [reply_of(admin, keys, flood[0])]
        for i in range(1, 4):
            flood.append(push(admin, keys, "NOTE", {"text": f"a{i}"}, conversation="telegram:1"))
            from_a.append(reply_of(admin, keys, flood[-1]))
        from_b = [
            reply_of(admin, keys, push(admin, keys, "NOTE", {"text": f"b{i}"}, conversation="console"))
            for i in range(3)
        ]
        again = CommandEnvelope.new("NOTE", {"text": "a0"}, "telegram:1", 60, origin=OWNER_TURN)
        again.id = flood[0]  # the same command handled again (after a crash): its own request, never busy
        admin.lpush(keys.command_queue, again.to_json())
        repeat = reply_of(admin, keys, again.id)
    assert [r["status"] for r in from_a] == ["pending_approval"] * 3 + ["error"]
    assert from_a[3]["error"] == "busy" and "ROUTER_MAX_PENDING_PER_CONVERSATION" in from_a[3]["message"]
    assert [r["status"] for r in from_b] == ["pending_approval"] * 2 + ["error"]
    assert "ROUTER_MAX_PENDING_APPROVALS" in from_b[2]["message"]
    assert repeat["status"] == "pending_approval"
    assert len(approvals.pending(control, keys)) == 5


def test_the_sweep_reads_only_what_expired_and_finds_a_lost_wake_up_page_by_page(redis_urls, admin):
    keys = redis_urls.keys
    conn = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(conn, keys, "r1", ttl=3600, caps=PendingCaps(10_000, 10_000))
    try:
        ids = []
        for i in range(450):
            envelope = CommandEnvelope.new("NOTE", {"text": str(i)}, f"c{i % 9}", 60, origin=OWNER_TURN)
            ids.append(store.request(envelope, {}, str(i), now=1000.0 if i < 7 else None).approval_id)
        expired = store.expired_ids()
        assert sorted(expired) == sorted(ids[:7])  # only the seven whose hour is over
        lost = ids[300]
        admin.set(keys.approval_decision(lost), json.dumps({"decision": "approve", "ts": 1.0}))
        pages = [store.decided_page() for _ in range(3)]  # 200 a page: the 450 in three sweeps
        assert sum(page.count(lost) for page in pages) == 1
    finally:
        conn.close()


def test_held_at_once_in_parallel_lanes_they_never_pass_the_cap(redis_urls, admin, control, tmp_path):
    keys = redis_urls.keys
    with router(redis_urls, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE", ROUTER_MAX_PENDING_PER_CONVERSATION="3"):
        ids = [push(admin, keys, "NOTE", {"text": f"n{i}"}, conversation="console") for i in range(12)]
        replies = [reply_of(admin, keys, cid) for cid in ids]
    waiting = [r for r in replies if r["status"] == "pending_approval"]
    assert 1 <= len(waiting) <= 3 and len(approvals.pending(control, keys)) == len(waiting)
    assert all(r["error"] == "busy" for r in replies if r["status"] != "pending_approval")
