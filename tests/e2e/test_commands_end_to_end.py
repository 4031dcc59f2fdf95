"""Slash commands through the whole stack: agent process → Redis → router subprocess → fakes.

A command needs no model (the scripted LLM has no reply queued, so a call to it would fail the
turn), and it is no way around the router: its policy, approvals and dry run hold it exactly
as they hold the model's actions."""

from __future__ import annotations

import json

import pytest

TEXT = "Hello from a slash command"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "expected_post", "expected_delete", "posted"),
    [
        ({}, "Posted on Bluesky: https://", "Deleted your post on Bluesky.", [TEXT]),
        (
            {"ROUTER_KILL_SWITCH": "true"},
            "Not done: the router refused to post on Bluesky: the kill switch is on",
            "Not done: the router refused to delete your post on Bluesky: the kill switch is on",
            [],
        ),
        (
            {"ROUTER_REQUIRE_APPROVAL": "CREATE_POST,DELETE_POST"},
            "Waiting for your approval (id ",
            "Waiting for your approval (id ",
            [],
        ),
    ],
    ids=["allowed", "kill_switch", "approval"],
)
def test_commands_go_through_the_router_policy(stack, policy, expected_post, expected_delete, posted):
    bsky = stack.fakes.bsky
    owner_post = bsky.add_post(bsky.did, "an old post")
    stack.start_router(**policy)
    run = stack.run_agent([], stdin=f"/post bsky {TEXT}\n/delete bsky {owner_post}\n")
    assert run.returncode == 0, run.stderr
    post_reply, delete_reply = run.stdout.splitlines()[:2]
    assert post_reply.startswith(expected_post), run.stdout
    assert delete_reply.startswith(expected_delete), run.stdout
    assert "CREATE_POST" not in run.stdout and "DELETE_POST" not in run.stdout  # plain words only
    assert stack.fakes.posted_texts("bsky") == posted
    assert (owner_post in bsky.records) == (not posted)  # deleted only when the policy allows it
    assert "script exhausted" not in run.stdout + run.stderr  # the model was never asked


@pytest.mark.slow
def test_a_command_in_dry_run_is_recorded_in_the_outbox_not_sent(stack):
    stack.start_router(ROUTER_DRY_RUN="true")
    run = stack.run_agent([], stdin=f"/post mastodon {TEXT}\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Posted on Mastodon (dry run: written to the router's outbox.jsonl, not sent")
    assert stack.fakes.posted_texts("mastodon") == []
    [line] = (stack.data_dir / "outbox.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["params"] == {"platform": "mastodon", "text": TEXT}
