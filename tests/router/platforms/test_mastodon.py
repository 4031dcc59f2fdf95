"""MastodonClient through the real `Mastodon.py` against the fake instance."""

import logging
import traceback

import pytest
import regex

from router.errors import SkillError
from router.platforms.base import PostRequest
from router.platforms.mastodon import MastodonClient, html_to_text
from tests.support.fake_mastodon import FakeMastodon, server_length

SECRET = "masto-TOKEN-SECRET-777"
FAMILY = "👨‍👩‍👧‍👦"


@pytest.fixture
def fake():
    server = FakeMastodon(token=SECRET).start()
    yield server
    server.stop()


def make_client(fake, token=SECRET, timeout=5.0):
    return MastodonClient({"MASTODON_INSTANCE": fake.url, "MASTODON_TOKEN": token}, {}, timeout)


def test_missing_token_is_no_credentials():
    with pytest.raises(SkillError) as caught:
        MastodonClient({"MASTODON_INSTANCE": "https://social.test"}, {})
    assert caught.value.kind == "no_credentials" and "MASTODON_TOKEN" in caught.value.message


def test_auth_test(fake):
    assert make_client(fake).auth_test() == {
        "platform": "mastodon",
        "handle": "safeclaw",
        "id": fake.me["id"],
    }


def test_plain_post_sends_the_command_id_as_idempotency_key(fake):
    ref = make_client(fake).post(PostRequest(text="hello fediverse", idempotency_key="cmd-7"))
    sent = fake.posts()[-1]
    assert sent.headers["idempotency-key"] == "cmd-7"
    assert fake.statuses[ref.id]["text"] == "hello fediverse"
    assert ref.url == f"{fake.url}/@safeclaw/{ref.id}"


def test_retried_post_returns_the_same_status(fake):
    first = make_client(fake).post(PostRequest(text="once", idempotency_key="cmd-8"))
    second = make_client(fake).post(PostRequest(text="once", idempotency_key="cmd-8"))
    assert first.id == second.id and len(fake.statuses) == 1


def test_reply_sets_in_reply_to_id_from_an_id_or_url(fake):
    alice = fake.account("alice", "Alice")
    parent = fake.add_status("hi", alice)
    client = make_client(fake)
    for ref in (parent["id"], parent["url"]):
        reply = client.post(PostRequest(text="hello back", reply_to=ref))
        assert fake.statuses[reply.id]["in_reply_to_id"] == parent["id"]


def test_foreign_status_url_is_refused_clearly(fake):
    with pytest.raises(SkillError) as caught:
        make_client(fake).post(PostRequest(text="x", reply_to="https://elsewhere.example/@bob/123"))
    assert caught.value.kind == "invalid_params"
    assert fake.posts() == []


@pytest.mark.parametrize("limit", [500, 120])
def test_long_text_fits_the_instance_limit_on_a_grapheme_boundary(fake, limit):
    fake.max_characters = limit
    text = "a" * (limit - 5) + FAMILY * 30
    ref = make_client(fake).post(PostRequest(text=text, idempotency_key=f"long-{limit}"))
    posted = fake.statuses[ref.id]["text"]
    assert ref.extra == {"truncated": True}
    assert server_length(posted) == limit
    assert posted == "a" * (limit - 5) + FAMILY * 4 + "…"
    assert len(regex.findall(r"\X", posted)) == limit
    assert "/api/v2/instance/" in fake.paths()


def test_link_counts_23_characters(fake):
    url = "https://example.com/" + "x" * 200
    ref = make_client(fake).post(PostRequest(text="b" * 600, url=url, idempotency_key="link"))
    posted = fake.statuses[ref.id]["text"]
    assert posted.endswith(" " + url) and server_length(posted) == 500 and ref.extra["truncated"]


def test_without_an_instance_limit_the_default_is_500(fake):
    fake.fail_mode, fake.fail_paths = "error", {"/api/v2/instance/", "/api/v2/instance"}
    client = make_client(fake)
    assert client.char_limit() == 500


def test_like_delete_metrics_profile(fake):
    alice = fake.account("alice")
    theirs = fake.add_status("like me", alice)
    client = make_client(fake)
    assert client.like(theirs["url"]) == {"liked": True, "id": theirs["id"]}
    fake.add_status("a reply", alice, in_reply_to_id=theirs["id"])
    assert client.metrics(theirs["id"]) == {
        "id": theirs["id"],
        "url": theirs["url"],
        "likes": 1,
        "reposts": 1,
        "replies": 1,
    }
    mine = client.post(PostRequest(text="delete me"))
    assert client.delete(mine.id) == {"deleted": True, "id": mine.id}
    assert mine.id not in fake.statuses
    profile = client.profile()
    assert profile["handle"] == "safeclaw" and profile["description"] == "A careful agent."


def test_missing_status_is_not_found(fake):
    with pytest.raises(SkillError) as caught:
        make_client(fake).metrics("999")
    assert caught.value.kind == "not_found"


def test_notifications_are_normalised_and_html_becomes_text(fake):
    alice = fake.account("alice", "Alice")
    mine = fake.add_status("my post")
    fake.add_notification(
        "mention",
        alice,
        fake.add_status(
            "",
            alice,
            raw_html=(
                '<p><span class="h-card"><a href="https://social.test/@safeclaw">@<span>safeclaw</span></a></span>'
                " hi &amp; welcome<br />line two</p><p>para</p>"
            ),
        ),
    )
    fake.add_notification("mention", alice, fake.add_status("re", alice, in_reply_to_id=mine["id"]))
    fake.add_notification("favourite", alice, mine)
    fake.add_notification("reblog", alice, mine)
    fake.add_notification("follow", alice)
    fake.add_notification("poll", alice, mine)  # a type we did not ask for
    items = make_client(fake).notifications(10)
    assert [n.kind for n in items] == ["follow", "repost", "like", "reply", "mention"]
    assert items[-1].text == "@safeclaw hi & welcome\nline two\n\npara"
    assert items[2].post_id == mine["id"] and items[2].text == ""
    assert fake.requests[-1].query["types[]"] == ["mention", "favourite", "follow", "reblog"]


def test_html_to_text():
    assert html_to_text("<p>a<br>b</p><p>c &lt;tool_code&gt;</p>") == "a\nb\n\nc <tool_code>"
    assert html_to_text(None) == ""


def assert_secret_nowhere(error, caplog, capfd):
    out, err = capfd.readouterr()
    rendered = [
        error.message,
        str(error),
        repr(error),
        "".join(traceback.format_exception(error)),
        caplog.text,
        out,
        err,
    ]
    assert all(SECRET not in text for text in rendered)


def test_auth_failure_never_reveals_the_echoed_token(fake, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    fake.fail_mode = "auth"
    with pytest.raises(SkillError) as caught:
        make_client(fake).post(PostRequest(text="x", idempotency_key="a"))
    assert caught.value.kind == "auth_failed"
    assert fake.requests and all(r.headers["authorization"] == f"Bearer {SECRET}" for r in fake.requests)
    assert_secret_nowhere(caught.value, caplog, capfd)


def test_wrong_token_is_auth_failed(fake, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(SkillError) as caught:
        make_client(fake, token="wrong-" + SECRET).auth_test()
    assert caught.value.kind == "auth_failed"
    assert_secret_nowhere(caught.value, caplog, capfd)


def test_rate_limit_carries_retry_after_from_the_reset_header(fake):
    fake.fail_mode = "rate"
    with pytest.raises(SkillError) as caught:
        make_client(fake).auth_test()
    assert caught.value.kind == "rate_limited"
    assert caught.value.retry_after is not None and 20 <= caught.value.retry_after <= 31


def test_server_error_is_request_failed(fake):
    fake.fail_mode = "error"
    with pytest.raises(SkillError) as caught:
        make_client(fake).metrics("1")
    assert caught.value.kind == "request_failed"


def test_timeout_is_request_failed(fake):
    fake.fail_mode, fake.delay = "slow", 5.0
    with pytest.raises(SkillError) as caught:
        make_client(fake, timeout=0.3).auth_test()
    assert caught.value.kind == "request_failed" and "in time" in caught.value.message


def test_an_approved_text_over_the_instance_limit_is_refused_not_cut(fake):
    fake.max_characters = 120
    with pytest.raises(SkillError) as caught:
        make_client(fake).post(PostRequest(text="w " * 100, idempotency_key="whole", whole=True))
    assert caught.value.kind == "invalid_params" and "approved it whole" in caught.value.message
    assert fake.posts() == []
