"""Which owner's messages ask to answer their mentions, and on which platforms."""

from __future__ import annotations

import pytest

from protocol.mention_replies import ANY_PLATFORM, asked_platforms


@pytest.mark.parametrize(
    ("message", "platforms"),
    [
        ("answer my mastodon mentions", {"mastodon"}),
        ("Please answer my mentions", {ANY_PLATFORM}),
        ("reply to my Bluesky mentions", {"bsky"}),
        ("respond to all of my new mentions on mastodon", {"mastodon"}),
        ("answer the latest mentions", {ANY_PLATFORM}),
        ("what are my mentions?", set()),
        ("summarise my mastodon mentions", set()),
        ("don't answer my mentions", set()),
        ("do not reply to my bluesky mentions, just list them", set()),
        ("read my mentions. Then answer my mastodon mentions", {"mastodon"}),
        ("answer the mentionsfoo", set()),
        ("", set()),
    ],
)
def test_the_owners_message_asks_to_answer_mentions(message, platforms):
    assert asked_platforms(message) == frozenset(platforms)
