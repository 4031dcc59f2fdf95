"""Every form of post address is accepted; anything else is malformed_url, saying what is wrong,
before any read (so no request ever names another host)."""

import pytest

from agent.explain import explain_post
from agent.explain.address import post_address
from agent.explain.errors import ExplainError
from agent.llm.scripted.llm import ScriptedLLM

DID = "did:plc:" + "a" * 24
CANON = "https://bsky.app/profile/alice.bsky.social/post/3l2abc"


@pytest.mark.parametrize(
    "text,expected",
    [
        (CANON, CANON),
        (CANON + "/", CANON),
        (CANON + "?ref=x&y=1", CANON),
        (CANON + "#replies", CANON),
        (CANON + "/?ref=x#frag", CANON),
        ("https://www.bsky.app/profile/alice.bsky.social/post/3l2abc", CANON),
        ("http://bsky.app/profile/alice.bsky.social/post/3l2abc", CANON),
        ("HTTPS://BSKY.APP/profile/alice.bsky.social/post/3l2abc", CANON),
        ("https://Bsky.App/PROFILE/Alice.Bsky.Social/Post/3l2abc", CANON),
        ("https://WWW.BSKY.APP/profile/ALICE.BSKY.SOCIAL/post/3l2abc/", CANON),
        ("bsky.app/profile/alice.bsky.social/post/3l2abc", CANON),  # pasted without the scheme
        ("www.bsky.app/profile/alice.bsky.social/post/3l2abc", CANON),
        (f"<{CANON}>", CANON),  # as some chat apps paste links
        (f"  {CANON}\u200b ", CANON),
        (CANON + ".", CANON),  # the full stop of the sentence around it
        (
            "https://bsky.app/profile/NYTimes.com/post/3kbq5ue7wjk2x",
            "https://bsky.app/profile/nytimes.com/post/3kbq5ue7wjk2x",
        ),
        (f"https://bsky.app/profile/{DID}/post/3l2abc", f"https://bsky.app/profile/{DID}/post/3l2abc"),
        (
            f"https://bsky.app/profile/{DID.upper()}/post/3l2abc",
            f"https://bsky.app/profile/{DID}/post/3l2abc",
        ),
        (
            "https://bsky.app/profile/did:web:blog.example.com/post/3l2abc",
            "https://bsky.app/profile/did:web:blog.example.com/post/3l2abc",
        ),
        (f"at://{DID}/app.bsky.feed.post/3l2abc", f"at://{DID}/app.bsky.feed.post/3l2abc"),
        (f"AT://{DID}/app.bsky.feed.post/3l2abc/", f"at://{DID}/app.bsky.feed.post/3l2abc"),
        (
            "at://did:web:example.com/app.bsky.feed.post/3l2abc",
            "at://did:web:example.com/app.bsky.feed.post/3l2abc",
        ),
        ("at://alice.test/app.bsky.feed.post/3l2abc", "at://alice.test/app.bsky.feed.post/3l2abc"),
        (
            "at://Alice.Bsky.Social/app.bsky.feed.post/3l2abc",
            "at://alice.bsky.social/app.bsky.feed.post/3l2abc",
        ),
        (
            "https://bsky.app/profile/alice.test/post/3l2:a~b_c-d.e",
            "https://bsky.app/profile/alice.test/post/3l2:a~b_c-d.e",
        ),
    ],
)
def test_accepted_forms(text, expected):
    assert post_address(text) == expected


MALFORMED = [
    ("", "empty"),
    ("   ", "empty"),
    ("hello", "not a bsky.app link"),
    ("https://bsky.app/profile/alice.test", "post's page"),
    ("https://bsky.app/", "post's page"),
    ("https://bsky.app/profile/alice.test/post/", "id (the part after /post/) is missing"),
    ("https://bsky.app/profile/alice.test/post", "id (the part after /post/) is missing"),
    ("https://bsky.app/profile/alice.test/lists/3l2abc", "'lists' page of a profile, not a post"),
    ("https://bsky.app/profile/alice.test/feed/aaa", "'feed' page"),
    ("https://bsky.app/profile/alice.test/post/3l2abc/likes", "more after the post's id"),
    ("https://bsky.app/profile/alice.test/post/..", "id (the part after /post/) is missing"),
    ("https://bsky.app/profile/alice.test/post/3l2%20abc", "may only hold"),
    ("https://bsky.app/profile/alice.test/post/3l2$abc", "may only hold"),
    ("https://bsky.app/profile/alice.test/post/" + "a" * 513, "may only hold"),
    ("https://evil.test/profile/alice.test/post/3l2abc", "points to evil.test, not bsky.app"),
    ("https://evil.com/profile/alice.bsky.social/post/3l2abc", "points to evil.com"),
    ("https://bsky.app.evil.test/profile/a.test/post/x", "points to bsky.app.evil.test"),
    ("https://bsky.app@evil.test/profile/a.test/post/x", "points to evil.test"),
    ("https://evil.test@bsky.app/profile/a.test/post/x", "not bsky.app"),
    ("https://bsky.app:8080/profile/a.test/post/x", "not bsky.app"),
    ("https://bsky.app:99999/profile/a.test/post/x", "not a valid web address"),
    ("https://[::1/profile/a.test/post/x", "not a valid web address"),
    ("ftp://bsky.app/profile/alice.test/post/3l2abc", "ftp: address"),
    ("javascript:alert(1)", "javascript: address"),
    ("JavaScript:fetch('https://bsky.app/profile/a.test/post/x')", "javascript: address"),
    ("data:text/html,<script>alert(1)</script>", "data: address"),
    ("file:///etc/passwd", "file: address"),
    (f"at://{DID}/app.bsky.feed.like/3l2abc", "'app.bsky.feed.like' record, not a post"),
    (f"at://{DID}/app.bsky.actor.profile/self", "'app.bsky.actor.profile' record"),
    (f"at://{DID}/app.bsky.feed.post", "id (the part after /post/) is missing"),
    (f"at://{DID}", "names its collection"),
    (f"at://{DID}/app.bsky.feed.post/3l2abc/extra", "more after the post's id"),
    ("at://alice/app.bsky.feed.post/3l2abc", "is not a handle"),
    ("at:///app.bsky.feed.post/3l2abc", "account (handle or DID) is missing"),
    ("https://bsky.app/profile/alice.test/post/3l2abc extra words", "spaces or control characters"),
    ("https://bsky.app/profile/alice.test/post/3l2abc\nextra", "spaces or control characters"),
    ("https://bsky.app/profile/alice.test/post/3l\x00abc", "spaces or control characters"),
    ("https://bsky.app/profile/did:plc:short/post/3l2abc", "did:plc"),
    ("https://bsky.app/profile/did:web:127.0.0.1:8080/post/x", "did:web of a host name"),
    ("https://bsky.app/profile/did:web:evil.com%2f..%2fx/post/x", "did:web of a host name"),
    ("https://bsky.app/profile/did:key:zQ3shabc/post/x", "did:plc"),
    ("https://bsky.app/profile/al%20ice.test/post/x", "is not a handle"),
    ("https://bsky.app/profile/123.456/post/x", "is not a handle"),
    ("https://bsky.app/profile/-alice.test/post/x", "is not a handle"),
    ("https://bsky.app/profile/printer.local/post/x", "can end in .local"),
    ("https://bsky.app/profile/" + "a" * 64 + ".test/post/x", "is not a handle"),
    ("https://bsky.app/profile/alice.test/post/3l2abc?" + "a" * 5000, "characters long"),
    ("https://bsky.app/profile/" + "a." * 30000 + "test/post/x", "characters long"),
]


@pytest.mark.parametrize("text,why", MALFORMED)
def test_anything_else_is_malformed_and_says_what_is_wrong(text, why):
    with pytest.raises(ExplainError) as caught:
        post_address(text)
    assert caught.value.kind == "malformed_url"
    assert why in caught.value.message and "bsky.app/profile/<handle" in caught.value.message
    assert len(caught.value.message) < 400  # a very long address is shown cut short


class RecordingRouter:
    def __init__(self):
        self.calls = []

    def call(self, action, params, conversation, intent="", origin=None):
        self.calls.append((action, params))
        return {"status": "error", "error": "router_not_connected", "message": "no router"}


@pytest.mark.parametrize("text", [text for text, _ in MALFORMED])
def test_no_malformed_address_reaches_the_router_or_the_model(text):
    router, llm = RecordingRouter(), ScriptedLLM([])
    with pytest.raises(ExplainError) as caught:
        explain_post(text, router, llm)
    assert caught.value.kind == "malformed_url" and router.calls == [] and llm.prompts == []
