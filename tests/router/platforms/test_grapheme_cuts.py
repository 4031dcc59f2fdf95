"""A post just over its platform's limit is cut between grapheme clusters of a current Unicode:
never inside an Indic conjunct (क्षि, ক্ষ্ম: one cluster since Unicode 15.1), an emoji ZWJ
sequence, a flag or a Hangul syllable spelt in conjoining jamo. Through each platform's real SDK
against its fake (Bluesky 300 graphemes, Mastodon 500, X 280 weighted)."""

from __future__ import annotations

import pytest
import regex

from router.platforms.base import PostRequest
from router.platforms.bsky import BlueskyClient
from router.platforms.mastodon import MastodonClient
from router.platforms.text_limits import ELLIPSIS, graphemes
from router.platforms.x import XClient
from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_mastodon import FakeMastodon
from tests.support.fake_x import ME_ID, FakeX

UNITS = {
    "devanagari": "क्षि", "bengali": "ক্ষ্ম", "family": "👨‍👩‍👧‍👦", "rainbow flag": "🏳️‍🌈",
    "flag": "🇯🇵", "hangul jamo": "\u1100\u1161\u11a8", "combining": "e\u0301",
}
SECRET = "grapheme-cuts-" + "secret-5150"
X_CREDS = {"X_API_KEY": "x-key-Gc11", "X_API_SECRET": "x-secret-Gc22", "X_ACCESS_TOKEN": f"{ME_ID}-x-token-Gc33",
           "X_ACCESS_SECRET": "x-access-Gc44"}


def post_on_bsky(text: str) -> str:
    fake = FakeBluesky(password=SECRET).start()
    try:
        env = {"BSKY_SERVICE": fake.url, "BSKY_APPVIEW": fake.url}
        BlueskyClient({"BSKY_HANDLE": fake.handle, "BSKY_PASSWORD": SECRET}, env, 5.0).post(PostRequest(text=text))
        return str(fake.writes()[-1]["record"]["text"])
    finally:
        fake.stop()


def post_on_mastodon(text: str) -> str:
    fake = FakeMastodon(token=SECRET).start()
    try:
        ref = MastodonClient({"MASTODON_INSTANCE": fake.url, "MASTODON_TOKEN": SECRET}, {}, 5.0).post(
            PostRequest(text=text))
        return str(fake.statuses[ref.id]["text"])
    finally:
        fake.stop()


def post_on_x(text: str) -> str:
    fake = FakeX(api_key=X_CREDS["X_API_KEY"], api_secret=X_CREDS["X_API_SECRET"],
                 access_token=X_CREDS["X_ACCESS_TOKEN"], access_secret=X_CREDS["X_ACCESS_SECRET"]).start()
    try:
        XClient(X_CREDS, {"X_API_BASE": fake.url}, timeout=5.0).post(PostRequest(text=text))
        sent = next(r for r in fake.requests if r.method == "POST" and r.path == "/2/tweets")
        return str(sent.json()["text"])
    finally:
        fake.stop()


PLATFORMS = {"bsky": (post_on_bsky, 300), "mastodon": (post_on_mastodon, 500), "x": (post_on_x, 280)}


def test_a_current_unicode_keeps_each_unit_one_cluster():
    assert all(graphemes(unit) == [unit] for unit in UNITS.values())
    assert graphemes("क्षिক্ষ্ম🇯🇵🇫🇷") == ["क्षि", "ক্ষ্ম", "🇯🇵", "🇫🇷"]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("unit", UNITS.values(), ids=UNITS.keys())
def test_a_post_just_over_the_limit_is_cut_between_clusters(platform, unit):
    post, limit = PLATFORMS[platform]
    prefix = "a" * (limit - 4)
    posted = post(prefix + unit * 6)
    assert posted.endswith(ELLIPSIS) and posted.startswith(prefix), posted
    rest = posted[len(prefix) : -len(ELLIPSIS)]
    assert rest == unit * (len(rest) // len(unit)), f"cut inside {unit!r}: {rest!r}"
    assert all(cluster == unit for cluster in regex.findall(r"\X", rest))
