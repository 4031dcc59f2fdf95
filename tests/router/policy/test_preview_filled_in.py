"""What a held Reddit or Moltbook post will be sent in place of a param left out is shown too: the
title the platform takes from the text's first line, and Moltbook's default community. Checked
against what the fake platforms received when the same post ran."""

from router.platforms.base import PostRequest
from router.platforms.moltbook import MoltbookClient
from router.policy.payload_preview import lines, preview
from tests.support.fake_moltbook import FakeMoltbook

KEY = "moltbook_sk_" + "previewKey4411"


def test_a_moltbook_post_shows_the_title_and_community_it_will_get():
    params = {"platform": "moltbook", "text": "Free crypto for everyone\nsecond line, the harmless one"}
    shown = "\n".join(lines(preview("post", params)))
    server = FakeMoltbook(api_key=KEY).start()
    try:
        MoltbookClient({"MOLTBOOK_API_KEY": KEY}, {"MOLTBOOK_API_BASE": server.base}).post(
            PostRequest(text=params["text"]))
        sent = server.requests[-1].json()
    finally:
        server.stop()
    assert f"title: {sent['title']} (the text's first line)" in shown
    assert f"community: {sent['submolt']} (the default)" in shown


def test_a_reddit_post_shows_its_title_from_the_text_and_given_fields_stay_as_given():
    long_line = "word " * 80
    shown = "\n".join(lines(preview("post", {"platform": "reddit", "subreddit": "news", "text": long_line})))
    title = next(line for line in shown.splitlines() if line.startswith("title: "))
    assert title.endswith("word… (the text's first line)") and len(title) <= len("title: ") + 300 + 25
    given = preview("post", {"platform": "reddit", "subreddit": "news", "title": "Mine", "text": "body"})
    assert [p["value"] for p in given if p["field"] == "title"] == ["Mine"]
    assert not any("default" in p["value"] for p in preview("reply", {"platform": "moltbook", "text": "hi"}))
