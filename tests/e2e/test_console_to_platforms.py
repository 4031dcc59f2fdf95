"""One console message per platform through the whole stack: agent (scripted LLM) → Redis →
router subprocess → the platform's fake, and the reply back to the console."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import PLATFORMS, tool_reply

POST_PARAMS = {"reddit": {"subreddit": "safeclaw_test", "title": "Hello from SafeClaw"}}


@pytest.mark.slow
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_console_message_posts_on_the_platform(stack, platform):
    text = f"Hello {platform}, this is SafeClaw end to end"
    final = f"Posted on {platform}."
    stack.start_router()
    run = stack.run_agent(
        [
            tool_reply(
                "I will post it.",
                ("CREATE_POST", {"platform": platform, "text": text, **POST_PARAMS.get(platform, {})}),
            ),
            final,
        ],
        stdin=f"Please post '{text}' on {platform}\n",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == final + "\n"
    assert stack.fakes.posted_texts(platform) == [text]
    for other in PLATFORMS:
        if other != platform:
            assert stack.fakes.posted_texts(other) == []
    artifact = stack.artifact()
    [step] = artifact["steps"]
    [result] = step["results"]
    assert result["action"] == "CREATE_POST" and result["status"] == "ok", result
    assert "dry_run" not in result
    post = result["result"]
    assert (
        post["platform"] == platform
        and post["id"]
        and post["url"].startswith(("https://", stack.fakes.mastodon.url))
    )
    assert created_id(stack.fakes, platform) in post["id"]
    assert post["id"].rsplit("/", 1)[-1].removeprefix("t3_") in post["url"]
    assert (
        json.loads((stack.workspace / "history" / "console.json").read_text())["turns"][-1]["response"]
        == final
    )


def created_id(fakes, platform: str) -> str:
    """The id under which the fake stored the one post it received."""
    if platform == "bsky":
        [uri] = [u for u in fakes.bsky.records if "/app.bsky.feed.post/" in u]
        return uri
    if platform == "mastodon":
        [status_id] = fakes.mastodon.statuses
        return status_id
    if platform == "reddit":
        [thing] = [t for t in fakes.reddit.things.values() if t.kind == "t3"]
        return thing.id
    if platform == "x":
        [tweet_id] = fakes.x.tweets
        return tweet_id
    [post_id] = fakes.moltbook.posts
    return post_id
