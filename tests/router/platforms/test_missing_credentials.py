"""A platform without its credentials is named as people name it ("X has no credentials"), not by
its key ("x has no credentials", read back to a newcomer who asked for their notifications)."""

from __future__ import annotations

import pytest

from router.errors import SkillError
from router.platforms.bsky import BlueskyClient
from router.platforms.mastodon import MastodonClient
from router.platforms.moltbook import MoltbookClient
from router.platforms.reddit import RedditClient
from router.platforms.x import XClient


@pytest.mark.parametrize(("client", "name"), [
    (BlueskyClient, "Bluesky"), (MastodonClient, "Mastodon"), (MoltbookClient, "Moltbook"),
    (RedditClient, "Reddit"), (XClient, "X"),
], ids=["bsky", "mastodon", "moltbook", "reddit", "x"])
def test_no_credentials_names_the_platform_and_the_variables(client, name):
    with pytest.raises(SkillError) as refused:
        client({}, {})
    assert str(refused.value.message).startswith(f"{name} has no credentials: set "), refused.value.message
    assert "router/.env" in refused.value.message
