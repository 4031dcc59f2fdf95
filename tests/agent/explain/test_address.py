"""Every form of post address is accepted; anything else is malformed_url before any read."""

import pytest

from agent.explain.address import post_address
from agent.explain.errors import ExplainError

DID = "did:plc:" + "a" * 24


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "https://bsky.app/profile/alice.bsky.social/post/3l2abc",
            "https://bsky.app/profile/alice.bsky.social/post/3l2abc",
        ),
        (
            "  http://www.bsky.app/profile/alice.test/post/3l2abc/?ref=x  ",
            "https://bsky.app/profile/alice.test/post/3l2abc",
        ),
        (f"https://bsky.app/profile/{DID}/post/3l2abc", f"https://bsky.app/profile/{DID}/post/3l2abc"),
        (f"at://{DID}/app.bsky.feed.post/3l2abc", f"at://{DID}/app.bsky.feed.post/3l2abc"),
        ("at://alice.test/app.bsky.feed.post/3l2abc", "at://alice.test/app.bsky.feed.post/3l2abc"),
    ],
)
def test_accepted_forms(text, expected):
    assert post_address(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "https://bsky.app/profile/alice.test",
        "https://bsky.app/profile/alice.test/post/",
        "https://evil.test/profile/alice.test/post/3l2abc",
        "https://bsky.app.evil.test/profile/a.test/post/x",
        f"at://{DID}/app.bsky.feed.like/3l2abc",
        "at://alice/app.bsky.feed.post/3l2abc",
        "https://bsky.app/profile/alice.test/post/3l2abc extra words",
        "javascript:alert(1)",
        "https://bsky.app/profile/did:plc:short/post/3l2abc",
        "https://bsky.app/profile/al ice.test/post/x",
    ],
)
def test_anything_else_is_malformed(text):
    with pytest.raises(ExplainError) as caught:
        post_address(text)
    assert caught.value.kind == "malformed_url" and "bsky.app/profile" in caught.value.message
