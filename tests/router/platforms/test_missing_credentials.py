"""A platform is named in the router's errors as people name it ("X has no credentials", "could not
reach Bluesky"), not by its key ("x has no credentials", read back to a newcomer who asked for
their notifications)."""

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


def test_a_platform_that_cannot_be_reached_is_named_as_people_name_it():
    """Offline, /explain said "could not reach bsky for the post fetch"."""
    from router.platforms.http_errors import error_for_status, error_from_exception

    offline = error_from_exception(ConnectionRefusedError(111, "refused"), "bsky", "post fetch")
    assert offline.message == "could not reach Bluesky for the post fetch", offline.message
    assert error_for_status("x", 503, None, "post").message.startswith("X failed the post (HTTP 503)")
    assert error_for_status("someplace", 503).message.startswith("someplace failed")  # unknown: as given
